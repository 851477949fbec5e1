#include "loco/checkpoint/json.hpp"

#include <algorithm>
#include <limits>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/core/log.hpp"
#include "loco/core/utf8.hpp"

namespace loco::checkpoint {
namespace {

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  }
}

class Parser {
 public:
  Parser(std::string_view text, const JsonLimits& limits) : text_(text), limits_(limits) {}

  JsonValue document() {
    if (text_.size() > limits_.max_bytes) {
      fail("is " + std::to_string(text_.size()) + " bytes, over the limit of " +
           std::to_string(limits_.max_bytes));
    }
    JsonValue value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("has unexpected text after the value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCategory::format, "JSON " + what + " (at byte " + std::to_string(pos_) + ")");
  }

  void skip_whitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  char peek() {
    if (pos_ >= text_.size()) fail("ends too early");
    return text_[pos_];
  }

  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  JsonValue parse_value(int depth) {
    skip_whitespace();
    const char c = peek();
    if (c == '{' || c == '[') {
      if (depth >= limits_.max_depth)
        fail("nests deeper than " + std::to_string(limits_.max_depth));
      return c == '{' ? parse_object(depth + 1) : parse_array(depth + 1);
    }
    if (c == '"') return JsonValue(parse_string());
    if (c == '-' || (c >= '0' && c <= '9')) return JsonValue(parse_integer());
    if (limits_.booleans && text_.substr(pos_, 4) == "true") {
      pos_ += 4;
      return JsonValue(true);
    }
    if (limits_.booleans && text_.substr(pos_, 5) == "false") {
      pos_ += 5;
      return JsonValue(false);
    }
    fail(limits_.booleans
             ? "has an unsupported value (only objects, arrays, strings, integers and booleans)"
             : "has an unsupported value (only objects, arrays, strings and integers)");
  }

  JsonValue parse_object(int depth) {
    expect('{');
    JsonValue::Object members;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return JsonValue(std::move(members));
    }
    while (true) {
      skip_whitespace();
      if (peek() != '"') fail("expected a string key");
      std::string key = parse_string();
      skip_whitespace();
      expect(':');
      members.emplace_back(std::move(key), parse_value(depth));
      skip_whitespace();
      if (peek() == '}') break;
      expect(',');
    }
    ++pos_;
    reject_duplicate_keys(members);
    return JsonValue(std::move(members));
  }

  // Sorting keeps this O(n log n): a header may hold millions of keys.
  void reject_duplicate_keys(const JsonValue::Object& members) const {
    std::vector<std::string_view> keys;
    keys.reserve(members.size());
    for (const auto& member : members) keys.push_back(member.first);
    std::sort(keys.begin(), keys.end());
    const auto twice = std::adjacent_find(keys.begin(), keys.end());
    if (twice != keys.end()) fail("has the key \"" + json_escape(*twice) + "\" twice in an object");
  }

  JsonValue parse_array(int depth) {
    expect('[');
    JsonValue::Array items;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return JsonValue(std::move(items));
    }
    while (true) {
      items.push_back(parse_value(depth));
      skip_whitespace();
      if (peek() == ']') break;
      expect(',');
    }
    ++pos_;
    return JsonValue(std::move(items));
  }

  std::uint32_t parse_hex4() {
    if (text_.size() - pos_ < 4) fail("ends inside a \\u escape");
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        fail("has a bad hex digit in a \\u escape");
      }
    }
    return value;
  }

  std::uint32_t parse_unicode_escape() {
    const std::uint32_t unit = parse_hex4();
    if (unit >= 0xdc00 && unit <= 0xdfff) fail("has a lone low surrogate");
    if (unit < 0xd800 || unit > 0xdbff) return unit;
    if (text_.substr(pos_, 2) != "\\u") fail("has a high surrogate without its low half");
    pos_ += 2;
    const std::uint32_t low = parse_hex4();
    if (low < 0xdc00 || low > 0xdfff) fail("has a high surrogate without its low half");
    return 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      const char c = peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("has a control character in a string");
      if (c != '\\') {
        const std::size_t length = utf8_sequence_length(text_.substr(pos_));
        if (length == 0) fail("has invalid UTF-8 in a string");
        out.append(text_.substr(pos_, length));
        pos_ += length;
        continue;
      }
      ++pos_;
      const char escape = peek();
      ++pos_;
      switch (escape) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': append_utf8(out, parse_unicode_escape()); break;
        default: --pos_; fail("has an unknown escape in a string");
      }
    }
  }

  std::int64_t parse_integer() {
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    const std::size_t digits = pos_ - start;
    if (digits == 0) fail("has '-' without digits");
    if (digits > 1 && text_[start] == '0') fail("has a number with a leading zero");
    if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
      fail("has a non-integer number");
    }
    // Accumulate as a negative number: its range holds INT64_MIN.
    constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
    std::int64_t value = 0;
    for (std::size_t i = start; i < pos_; ++i) {
      const int digit = text_[i] - '0';
      if (value < (kMin + digit) / 10) fail("has an integer outside int64");
      value = value * 10 - digit;
    }
    if (!negative) {
      if (value == kMin) fail("has an integer outside int64");
      value = -value;
    }
    return value;
  }

  std::string_view text_;
  JsonLimits limits_;
  std::size_t pos_ = 0;
};

}  // namespace

const JsonValue::Object& JsonValue::object() const {
  LOCO_ASSERT(is_object(), "JsonValue is not an object");
  return std::get<Object>(value_);
}

const JsonValue::Array& JsonValue::array() const {
  LOCO_ASSERT(is_array(), "JsonValue is not an array");
  return std::get<Array>(value_);
}

const std::string& JsonValue::string() const {
  LOCO_ASSERT(is_string(), "JsonValue is not a string");
  return std::get<std::string>(value_);
}

std::int64_t JsonValue::integer() const {
  LOCO_ASSERT(is_integer(), "JsonValue is not an integer");
  return std::get<std::int64_t>(value_);
}

bool JsonValue::boolean() const {
  LOCO_ASSERT(is_boolean(), "JsonValue is not a boolean");
  return std::get<bool>(value_);
}

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [name, value] : object()) {
    if (name == key) return &value;
  }
  return nullptr;
}

JsonValue parse_json(std::string_view text, const JsonLimits& limits) {
  return Parser(text, limits).document();
}

std::string json_quote(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (length == 0) {
      throw Error(ErrorCategory::invalid_argument,
                  "JSON string: invalid UTF-8 at byte " + std::to_string(i));
    }
    i += length;
  }
  std::string quoted = "\"";
  quoted += json_escape(text);
  quoted += '"';
  return quoted;
}

}  // namespace loco::checkpoint
