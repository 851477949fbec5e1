#pragma once
// Codec spec strings: one or more stages joined by '+', each "name" or "name:key=value,...".
//   "int8:block=256"   "fp4:block=64"   "demo:chunk=64,topk=32,values=sign"   "int8+zstd:level=3"
// parse_codec_spec() checks only the syntax; StageParams reads and range-checks the values and
// rejects keys the codec does not know. Every failure is Error(config) naming the bad part.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loco::compress {

struct StageSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;  // in the order written
};

// Throws Error(config) on an empty stage, a parameter without '=', or a duplicate key.
std::vector<StageSpec> parse_codec_spec(std::string_view text);

// Reads one stage's parameters. Each get_* marks its key as used; finish() throws if a key was
// never asked for, listing the keys this codec accepts.
class StageParams {
 public:
  explicit StageParams(const StageSpec& stage) : stage_(stage) {}

  std::uint64_t get_uint(const std::string& key, std::uint64_t fallback, std::uint64_t min,
                         std::uint64_t max);
  float get_float(const std::string& key, float fallback, float min, float max);
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& choices);
  void finish() const;

 private:
  const std::string* find(const std::string& key);
  [[noreturn]] void fail(const std::string& key, const std::string& value,
                         const std::string& expected) const;

  const StageSpec& stage_;
  std::vector<std::string> known_;
};

}  // namespace loco::compress
