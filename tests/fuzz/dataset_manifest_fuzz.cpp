// Fuzz target: dataset manifests (loco/data/dataset_manifest.hpp), which a peer reads from a
// dataset folder it may have fetched from anyone. A manifest that decodes must encode back to the
// same text (the format has one spelling), and its peer-shard mapping stays inside its shards.

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_seeds.hpp"
#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/data/dataset_manifest.hpp"

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  const std::string h(64, 'a');
  const std::string seeds[] = {
      "loco-dataset/1\ntokenizer=sentencepiece name=tokenizer.model bytes=1234 blake2b=" + h +
          "\nvocab=400 token-bytes=2 shard-tokens=10\n"
          "train name=train-00000.bin tokens=10 bytes=20 blake2b=" +
          h + "\ntrain name=train-00001.bin tokens=3 bytes=6 blake2b=" + h +
          "\nval name=val-00000.bin tokens=7 bytes=14 blake2b=" + h + "\n",
      "loco-dataset/1\ntokenizer=bytes\nvocab=256 token-bytes=2 shard-tokens=4294967296\n"
      "train name=t tokens=4294967296 bytes=8589934592 blake2b=" +
          h + "\nval name=v tokens=1 bytes=2 blake2b=" + h + "\n",
  };
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& s : seeds) out.emplace_back(s.begin(), s.end());
  return out;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const loco::data::DatasetManifest m = loco::data::decode_manifest(text);
    LOCO_ASSERT(loco::data::encode_manifest(m) == text, "manifest does not round-trip");
    for (std::uint32_t count : {1u, 3u, 64u}) {
      for (std::uint32_t i = 0; i < count; ++i) {
        const loco::data::ShardSpan s = loco::data::train_shards_of(m, {i, count});
        LOCO_ASSERT(s.first <= s.end && s.end <= m.train.size(), "shard span outside the shards");
      }
    }
  } catch (const loco::Error&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}
