// Fuzz target: every codec's decoder (loco/compress/codec.hpp). The first input byte picks the
// codec; the rest is the message. The receiver's expected count is taken from the message's
// own count field when it is small, so mutations reach past the header checks.

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "fuzz_seeds.hpp"
#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"

namespace {

const char* const kSpecs[] = {
    "fp32",
    "fp16",
    "bf16",
    "int8:block=64",
    "uint8",
    "fp4:block=64",
    "int4:block=32",
    "int2:block=16",
    "sign:block=64",
    "topk:fraction=0.1,values=int8",
    "demo:chunk=8,topk=4,values=sign",
    "demo:chunk=16,topk=8,values=fp16",
    "chunktopk:chunk=16,topk=4,values=int2",
    "int8+zstd:level=1",
    "topk:fraction=0.05,values=fp4+zstd",
};
constexpr std::size_t kCodecs = sizeof(kSpecs) / sizeof(kSpecs[0]);

const loco::compress::Codec& codec(std::size_t i) {
  static const auto codecs = [] {
    std::vector<std::unique_ptr<loco::compress::Codec>> out;
    for (const char* spec : kSpecs) out.push_back(loco::compress::make_codec(spec));
    return out;
  }();
  return *codecs[i];
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  std::vector<std::vector<std::uint8_t>> seeds;
  loco::Rng rng(1);
  const std::size_t shape[] = {16, 24};
  std::vector<float> x(16 * 24);
  for (auto& v : x) v = rng.normal();
  for (std::size_t c = 0; c < kCodecs; ++c) {
    const auto message = codec(c).encode(x, {.seed = 1, .shape = shape});
    std::vector<std::uint8_t> seed{static_cast<std::uint8_t>(c)};
    const auto* p = reinterpret_cast<const std::uint8_t*>(message.data());
    seed.insert(seed.end(), p, p + message.size());
    seeds.push_back(std::move(seed));
  }
  return seeds;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& c = codec(data[0] % kCodecs);
  const std::span<const std::byte> message(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  std::uint64_t declared = 64;
  if (message.size() >= 12) std::memcpy(&declared, message.data() + 4, 8);
  std::vector<float> out(declared <= (1u << 16) ? declared : 64);
  try {
    c.decode(message, out);
    c.decode_accumulate(message, out);
  } catch (const loco::Error& e) {
    if (e.category() != loco::ErrorCategory::format) __builtin_trap();
  }
  return 0;
}
