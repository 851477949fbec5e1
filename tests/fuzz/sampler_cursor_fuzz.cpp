// Fuzz target: data cursors (loco/data/sampler_cursor.hpp) as read back from checkpoint metadata.
// A cursor that decodes must encode back to the same text (the format has one spelling).

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_seeds.hpp"
#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/data/sampler_cursor.hpp"

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  const std::string seeds[] = {
      "loco-cursor/1 shard=3/4 tokens=123456789012 context=128 batch=16 seed=7 epoch=2 "
      "position=77",
      "loco-cursor/1 shard=0/1 tokens=18446744073709551615 context=4294967295 batch=1 seed=0 "
      "epoch=0 position=0",
  };
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& s : seeds) out.emplace_back(s.begin(), s.end());
  return out;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const loco::data::CursorRecord record = loco::data::decode_cursor(text);
    LOCO_ASSERT(loco::data::encode_cursor(record) == text, "cursor does not round-trip");
  } catch (const loco::Error&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}
