#include "loco/etcd/gateway_json.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <charconv>

#include "loco/checkpoint/json.hpp"
#include "loco/core/error.hpp"

namespace loco::etcd {
namespace {

using checkpoint::JsonValue;

[[noreturn]] void malformed(std::string_view what) {
  throw Error(ErrorCategory::format, fmt::format("etcd's answer: {}", what));
}

JsonValue parse(std::string_view body, const GatewayLimits& limits) {
  const checkpoint::JsonLimits json{.max_bytes = limits.max_body_bytes, .booleans = true};
  try {
    JsonValue value = checkpoint::parse_json(body, json);
    if (!value.is_object()) malformed("not a JSON object");
    return value;
  } catch (const Error& e) {
    malformed(e.message());
  }
}

std::string base64(std::string_view bytes) {
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size(), sodium_base64_VARIANT_ORIGINAL);
  out.pop_back();  // the terminating NUL
  return out;
}

// A base64 field of at most `max_bytes` decoded: its length is checked before the buffer exists.
std::string unbase64(const JsonValue& object, std::string_view key, std::size_t max_bytes) {
  const JsonValue* field = object.find(key);
  if (field == nullptr) return {};
  if (!field->is_string()) malformed(fmt::format("'{}' is not a string", key));
  const std::string& text = field->string();
  if (text.size() / 4 * 3 > max_bytes + 2 || text.size() % 4 != 0)
    malformed(fmt::format("'{}' is {} base64 characters, over the {} bytes allowed or not whole",
                          key, text.size(), max_bytes));
  std::string out(text.size() / 4 * 3, '\0');
  std::size_t length = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), nullptr, &length, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size() || length > max_bytes)
    malformed(fmt::format("'{}' is not base64 of at most {} bytes", key, max_bytes));
  out.resize(length);
  return out;
}

// A non-negative 64-bit field, written as a decimal string; 0 when left out.
std::int64_t number(const JsonValue& object, std::string_view key) {
  const JsonValue* field = object.find(key);
  if (field == nullptr) return 0;
  if (!field->is_string()) malformed(fmt::format("'{}' is not a decimal string", key));
  const std::string& text = field->string();
  std::int64_t value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0)
    malformed(fmt::format("'{}' is '{}', not a count", key, text));
  return value;
}

const JsonValue& member(const JsonValue& object, std::string_view key) {
  const JsonValue* field = object.find(key);
  if (field == nullptr || !field->is_object())
    malformed(fmt::format("'{}' is missing or not an object", key));
  return *field;
}

std::int64_t header_revision(const JsonValue& response) {
  const std::int64_t revision = number(member(response, "header"), "revision");
  if (revision <= 0) malformed("its header has no revision");
  return revision;
}

bool in_range(const Range& range, std::string_view key) {
  if (range.range_end.empty()) return key == range.key;
  return key >= range.key &&
         (range.range_end == std::string_view("\0", 1) || key < range.range_end);
}

// The "kvs" of a range response: keys of the range asked, at most its limit and max_kvs.
std::vector<KeyValue> key_values(const JsonValue& response, const Range& range,
                                 const GatewayLimits& limits) {
  const std::int64_t limit = range.limit;
  const JsonValue* field = response.find("kvs");
  if (field == nullptr) return {};
  if (!field->is_array()) malformed("'kvs' is not an array");
  const auto& items = field->array();
  const std::size_t most =
      limit > 0 ? std::min<std::size_t>(limits.max_kvs, limit) : limits.max_kvs;
  if (items.size() > most)
    malformed(fmt::format("{} keys, more than the {} asked or allowed", items.size(), most));
  std::vector<KeyValue> kvs;
  kvs.reserve(items.size());
  for (const JsonValue& item : items) {
    if (!item.is_object()) malformed("a key in 'kvs' is not an object");
    KeyValue kv{.key = unbase64(item, "key", limits.max_key_bytes),
                .value = unbase64(item, "value", limits.max_value_bytes),
                .create_revision = number(item, "create_revision"),
                .mod_revision = number(item, "mod_revision"),
                .version = number(item, "version"),
                .lease = number(item, "lease")};
    if (!in_range(range, kv.key) || kv.create_revision <= 0 || kv.mod_revision < kv.create_revision)
      malformed("a key outside the range asked, or with revisions out of order");
    kvs.push_back(std::move(kv));
  }
  return kvs;
}

std::string encode_op(const Op& op) {
  if (const auto* range = std::get_if<Range>(&op))
    return fmt::format("{{\"request_range\":{}}}", encode_range(*range));
  if (const auto* put = std::get_if<Put>(&op))
    return fmt::format("{{\"request_put\":{{\"key\":\"{}\",\"value\":\"{}\",\"lease\":\"{}\"}}}}",
                       base64(put->key), base64(put->value), put->lease);
  const auto& del = std::get<DeleteRange>(op);
  return fmt::format("{{\"request_delete_range\":{{\"key\":\"{}\",\"range_end\":\"{}\"}}}}",
                     base64(del.key), base64(del.range_end));
}

std::string encode_ops(const std::vector<Op>& ops) {
  std::string out = "[";
  for (const Op& op : ops) out += (out.size() > 1 ? "," : "") + encode_op(op);
  return out + "]";
}

const char* target_name(Compare::Target target) {
  switch (target) {
    case Compare::Target::create_revision: return "CREATE";
    case Compare::Target::mod_revision: return "MOD";
    case Compare::Target::version: return "VERSION";
  }
  return "CREATE";
}

const char* target_field(Compare::Target target) {
  switch (target) {
    case Compare::Target::create_revision: return "create_revision";
    case Compare::Target::mod_revision: return "mod_revision";
    case Compare::Target::version: return "version";
  }
  return "create_revision";
}

}  // namespace

std::string encode_range(const Range& range) {
  std::string out = fmt::format("{{\"key\":\"{}\",\"range_end\":\"{}\",\"limit\":\"{}\"",
                                base64(range.key), base64(range.range_end), range.limit);
  if (range.oldest_first) out += ",\"sort_target\":\"CREATE\",\"sort_order\":\"ASCEND\"";
  return out + "}";
}

std::string encode_txn(const Txn& txn) {
  std::string compares = "[";
  for (const Compare& c : txn.compare) {
    compares +=
        fmt::format("{}{{\"key\":\"{}\",\"target\":\"{}\",\"result\":\"EQUAL\",\"{}\":\"{}\"}}",
                    compares.size() > 1 ? "," : "", base64(c.key), target_name(c.target),
                    target_field(c.target), c.value);
  }
  return fmt::format("{{\"compare\":{}],\"success\":{},\"failure\":{}}}", compares,
                     encode_ops(txn.success), encode_ops(txn.failure));
}

std::string encode_lease_grant(std::int64_t ttl_s) {
  return fmt::format("{{\"TTL\":\"{}\"}}", ttl_s);
}

std::string encode_lease_id(LeaseId lease) {
  return fmt::format("{{\"ID\":\"{}\"}}", lease);
}

RangeResult decode_range(std::string_view body, const Range& range, const GatewayLimits& limits) {
  const JsonValue response = parse(body, limits);
  RangeResult result;
  result.revision = header_revision(response);
  result.kvs = key_values(response, range, limits);
  result.count = number(response, "count");
  if (result.count < static_cast<std::int64_t>(result.kvs.size()))
    malformed("'count' is below the keys it sent");
  return result;
}

TxnResult decode_txn(std::string_view body, const Txn& txn, const GatewayLimits& limits) {
  const JsonValue response = parse(body, limits);
  TxnResult result;
  result.revision = header_revision(response);
  if (const JsonValue* succeeded = response.find("succeeded")) {
    if (!succeeded->is_boolean()) malformed("'succeeded' is not a boolean");
    result.succeeded = succeeded->boolean();
  }
  const std::vector<Op>& ops = result.succeeded ? txn.success : txn.failure;
  const JsonValue* field = response.find("responses");
  if (field != nullptr && !field->is_array()) malformed("'responses' is not an array");
  const std::size_t count = field == nullptr ? 0 : field->array().size();
  if (count != ops.size())
    malformed(fmt::format("{} responses to {} operations", count, ops.size()));
  for (std::size_t i = 0; i < count; ++i) {
    const JsonValue& item = field->array()[i];
    if (!item.is_object() || item.object().size() != 1) malformed("a response is not one object");
    const auto* range = std::get_if<Range>(&ops[i]);
    const char* expected = range != nullptr                      ? "response_range"
                           : std::holds_alternative<Put>(ops[i]) ? "response_put"
                                                                 : "response_delete_range";
    if (item.object()[0].first != expected || !item.object()[0].second.is_object())
      malformed(fmt::format("response {} is not {}", i, expected));
    if (range != nullptr)
      result.ranges.push_back(key_values(item.object()[0].second, *range, limits));
  }
  return result;
}

Lease decode_lease_grant(std::string_view body, const GatewayLimits& limits) {
  const JsonValue response = parse(body, limits);
  header_revision(response);
  const Lease lease{.id = number(response, "ID"), .ttl_s = number(response, "TTL")};
  if (lease.id <= 0 || lease.ttl_s <= 0) malformed("a lease with no ID or TTL");
  return lease;
}

std::int64_t decode_keepalive(std::string_view body, const GatewayLimits& limits) {
  const JsonValue message = parse(body.substr(0, body.find('\n')), limits);
  if (const JsonValue* error = message.find("error")) {
    throw Error(ErrorCategory::protocol,
                fmt::format("etcd refused a lease keepalive: {}",
                            error->is_object() && error->find("message") != nullptr &&
                                    error->find("message")->is_string()
                                ? error->find("message")->string()
                                : std::string("(no message)")));
  }
  return number(member(message, "result"), "TTL");
}

GatewayError decode_error(std::string_view body, const GatewayLimits& limits) {
  const JsonValue response = parse(body, limits);
  const JsonValue* code = response.find("code");
  const JsonValue* message = response.find("message");
  if (code == nullptr || !code->is_integer() || code->integer() < 0 || code->integer() > 64 ||
      message == nullptr || !message->is_string())
    malformed("an error without a code and message");
  return {static_cast<int>(code->integer()), message->string()};
}

}  // namespace loco::etcd
