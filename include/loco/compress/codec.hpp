#pragma once
// Codecs for everything peers send each other (outer updates, DeMo components). A codec turns a
// span of fp32 values into a self-describing message and back:
//
//   message = header | payload
//   header  = magic "lc" (2 bytes) | codec id (u8) | format version (u8) | element count (u64 LE)
//             | the codec's own parameters
//
// Codecs are built by name from config (see spec.hpp): "int8:block=256", "fp4:block=64",
// "demo:chunk=64,topk=32,values=sign", "chunktopk:chunk=4096,topk=64,values=int2",
// "int8+zstd:level=3". docs/CODECS.md gives each wire
// format, its exact size and its error bound.
//
// Decoders treat the message as untrusted: they check the header, every count against the
// buffer length, block sizes, indices and the version before they write or allocate, and throw
// Error(format) on anything malformed. The receiver always knows how many values it expects, so
// decode() takes an output span of that size and rejects a message that declares another count.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loco::compress {

enum class CodecId : std::uint8_t {
  fp32 = 1,
  fp16 = 2,
  bf16 = 3,
  int8 = 4,
  uint8 = 5,
  fp4 = 6,
  int4 = 7,
  sign = 8,
  topk = 9,
  demo = 10,
  zstd = 11,
  int2 = 12,
  chunktopk = 13,
};

inline constexpr std::size_t kHeaderBytes = 12;  // magic, id, version, count

struct EncodeOptions {
  // Seed of the counter-based stream behind stochastic rounding; the same values and seed give
  // the same bytes on any thread count. Ignored by codecs that round to nearest.
  std::uint64_t seed = 0;
  // Row-major tensor shape (outermost first); empty means one dimension of values.size(). Only
  // the DCT codec (demo) uses it; others check that its product matches.
  std::span<const std::size_t> shape = {};
};

class Codec {
 public:
  virtual ~Codec() = default;

  // The canonical spec string this codec was built from, with every parameter spelled out.
  virtual std::string spec() const = 0;

  // An upper bound on encode(values).size() for `count` values (exact for fixed-size formats).
  virtual std::size_t max_encoded_size(std::size_t count) const = 0;

  // Throws Error(invalid_argument) on NaN or infinite input, or a shape that does not match.
  virtual std::vector<std::byte> encode(std::span<const float> values,
                                        const EncodeOptions& options = {}) const = 0;

  // Writes the decoded values to `out`, whose size must equal the message's element count.
  virtual void decode(std::span<const std::byte> message, std::span<float> out) const = 0;

  // sum[i] += decoded[i], bit for bit equal to decode() into a buffer and then adding it.
  virtual void decode_accumulate(std::span<const std::byte> message,
                                 std::span<float> sum) const = 0;
};

// Builds a codec from a spec string; throws Error(config) naming the bad part and listing the
// valid choices.
std::unique_ptr<Codec> make_codec(std::string_view spec);

}  // namespace loco::compress
