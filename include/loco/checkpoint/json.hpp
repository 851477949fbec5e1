#pragma once
// A minimal, strict JSON reader and the one writer helper safetensors headers need.
//
// It accepts exactly the subset safetensors uses: objects, arrays, strings (with every JSON
// escape, \u surrogate pairs included) and integers (int64, no fraction or exponent), and true
// and false where the caller allows them (etcd's JSON gateway: `etcd/gateway_json.hpp`). null
// and floating-point numbers are refused, as are duplicate keys, invalid UTF-8,
// control characters in strings, trailing text, and inputs past the size or depth limit. The
// input is untrusted (a file from disk): every failure is Error(format) with the byte offset.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace loco::checkpoint {

class JsonValue {
 public:
  using Object = std::vector<std::pair<std::string, JsonValue>>;  // file order, unique keys
  using Array = std::vector<JsonValue>;

  explicit JsonValue(Object object) : value_(std::move(object)) {}
  explicit JsonValue(Array array) : value_(std::move(array)) {}
  explicit JsonValue(std::string text) : value_(std::move(text)) {}
  explicit JsonValue(std::int64_t number) : value_(number) {}
  explicit JsonValue(bool truth) : value_(truth) {}

  bool is_object() const { return std::holds_alternative<Object>(value_); }
  bool is_array() const { return std::holds_alternative<Array>(value_); }
  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  bool is_integer() const { return std::holds_alternative<std::int64_t>(value_); }
  bool is_boolean() const { return std::holds_alternative<bool>(value_); }

  // Accessors assert the kind: check it with is_*() first.
  const Object& object() const;
  const Array& array() const;
  const std::string& string() const;
  std::int64_t integer() const;
  bool boolean() const;

  // The member named `key` of an object, or nullptr.
  const JsonValue* find(std::string_view key) const;

 private:
  std::variant<Object, Array, std::string, std::int64_t, bool> value_;
};

struct JsonLimits {
  std::size_t max_bytes = 100u << 20;  // safetensors caps its header at 100 MB too
  int max_depth = 16;                  // nesting of objects and arrays
  bool booleans = false;               // true and false; safetensors headers hold none
};

JsonValue parse_json(std::string_view text, const JsonLimits& limits = {});

// `text` as a JSON string literal, quotes included (UTF-8 passes through; control characters,
// quotes and backslashes are escaped).
std::string json_quote(std::string_view text);

}  // namespace loco::checkpoint
