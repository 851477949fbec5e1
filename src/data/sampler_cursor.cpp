#include "loco/data/sampler_cursor.hpp"

#include <charconv>
#include <limits>

#include "loco/core/error.hpp"

namespace loco::data {
namespace {

constexpr std::string_view kMagic = "loco-cursor/1";
constexpr std::size_t kMaxLength = 512;

[[noreturn]] void fail(std::string_view what) {
  throw Error(ErrorCategory::format, "data cursor: " + std::string(what));
}

// Reads the input field by field; each read consumes its text and a separating space.
class Reader {
 public:
  explicit Reader(std::string_view text) : rest_(text) {}

  void expect(std::string_view literal, std::string_view field) {
    if (!rest_.starts_with(literal)) fail("expected '" + std::string(field) + "'");
    rest_.remove_prefix(literal.size());
  }

  std::uint64_t number(std::string_view field, std::uint64_t max) {
    std::size_t digits = 0;
    while (digits < rest_.size() && rest_[digits] >= '0' && rest_[digits] <= '9') ++digits;
    if (digits == 0 || (digits > 1 && rest_[0] == '0')) {
      fail("field '" + std::string(field) + "' is not a plain decimal number");
    }
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(rest_.data(), rest_.data() + digits, value);
    if (ec != std::errc() || value > max) fail("field '" + std::string(field) + "' is too large");
    rest_.remove_prefix(digits);
    return value;
  }

  void field(std::string_view name) {
    expect(" ", name);
    expect(name, name);
    expect("=", name);
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace

std::string encode_cursor(const CursorRecord& r) {
  return std::string(kMagic) + " shard=" + std::to_string(r.shard.index) + "/" +
         std::to_string(r.shard.count) + " tokens=" + std::to_string(r.tokens) +
         " context=" + std::to_string(r.context) + " batch=" + std::to_string(r.batch_size) +
         " seed=" + std::to_string(r.seed) + " epoch=" + std::to_string(r.at.epoch) +
         " position=" + std::to_string(r.at.position);
}

CursorRecord decode_cursor(std::string_view text) {
  if (text.size() > kMaxLength) fail("longer than any cursor loco writes");
  constexpr auto u32 = std::numeric_limits<std::uint32_t>::max();
  constexpr auto u64 = std::numeric_limits<std::uint64_t>::max();
  Reader in(text);
  CursorRecord r;
  in.expect(kMagic, "loco-cursor/1");
  in.field("shard");
  r.shard.index = static_cast<std::uint32_t>(in.number("shard", u32));
  in.expect("/", "shard count");
  r.shard.count = static_cast<std::uint32_t>(in.number("shard count", u32));
  in.field("tokens");
  r.tokens = in.number("tokens", u64);
  in.field("context");
  r.context = static_cast<std::uint32_t>(in.number("context", u32));
  in.field("batch");
  r.batch_size = static_cast<std::uint32_t>(in.number("batch", u32));
  in.field("seed");
  r.seed = in.number("seed", u64);
  in.field("epoch");
  r.at.epoch = in.number("epoch", u64);
  in.field("position");
  r.at.position = in.number("position", u64);
  if (!in.done()) fail("unexpected text after 'position'");
  if (r.shard.index >= r.shard.count) fail("shard index is not below the shard count");
  return r;
}

}  // namespace loco::data
