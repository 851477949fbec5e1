#include "loco/etcd/etcd_client.hpp"

#include <fmt/format.h>

#include <charconv>

#include "http_post.hpp"
#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::etcd {
namespace {

constexpr int kGrpcNotFound = 5;

// A large request or answer (a replica's whole state, up to megabytes) takes etcd longer to read,
// replicate, write to disk or encode: each step of it may take a millisecond more for every 2,000
// bytes (2 MB/s; measured: a 10 MB transaction answered in 1.1 to 1.4 s by one loopback member on
// a loaded machine), beyond the timeout that finds a frozen member.
std::chrono::milliseconds request_timeout(std::chrono::milliseconds io_timeout,
                                          std::size_t body_bytes) {
  return io_timeout + std::chrono::milliseconds(body_bytes / 2000);
}

}  // namespace

EtcdEndpoint parse_etcd_endpoint(std::string_view url) {
  const auto fail = [&](const char* why) {
    throw Error(ErrorCategory::config, fmt::format("etcd endpoint '{}': {}", url, why));
  };
  if (url.starts_with("https://")) fail("TLS to etcd is not built yet: give http://host:port");
  if (url.starts_with("http://")) url.remove_prefix(7);
  if (url.ends_with('/')) url.remove_suffix(1);
  const std::size_t colon = url.rfind(':');
  if (colon == std::string_view::npos || colon == 0) fail("needs host:port");
  const std::string_view port = url.substr(colon + 1);
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (ec != std::errc{} || end != port.data() + port.size() || number == 0 || number > 65535 ||
      url.substr(0, colon).find('/') != std::string_view::npos)
    fail("needs host:port with a port in 1..65535");
  return {std::string(url.substr(0, colon)), std::string(port)};
}

EtcdClient::EtcdClient(EtcdClientOptions options) : options_(std::move(options)) {
  if (options_.endpoints.empty())
    throw Error(ErrorCategory::config, "an etcd client needs at least one endpoint");
}

EtcdClient::Answer EtcdClient::post(std::string_view path, const std::string& body,
                                    std::size_t answer_bytes) {
  std::string failures;
  for (std::size_t tried = 0; tried < options_.endpoints.size(); ++tried) {
    const std::size_t i = (current_ + tried) % options_.endpoints.size();
    const EtcdEndpoint& member = options_.endpoints[i];
    try {
      PostAnswer answer =
          http_post(member.host, member.port, path, body,
                    request_timeout(options_.io_timeout, body.size() + answer_bytes),
                    options_.limits.max_body_bytes);
      // 503 and 504 (gRPC's UNAVAILABLE, DEADLINE_EXCEEDED): this member has no raft leader now
      // (cut off from the majority, or mid-election); another one may.
      if (answer.status == 503 || answer.status == 504) {
        failures += fmt::format("{}{}:{} answers {}", failures.empty() ? "" : "; ", member.host,
                                member.port, answer.status);
        continue;
      }
      current_ = i;
      return {answer.status, std::move(answer.body)};
    } catch (const Error& e) {
      if (e.category() != ErrorCategory::network) throw;
      failures += (failures.empty() ? "" : "; ") + e.message();
    }
  }
  throw Error(ErrorCategory::network, fmt::format("no etcd member answered: {}", failures));
}

std::string EtcdClient::ok_body(std::string_view path, const Answer& answer) const {
  if (answer.status == 200) return answer.body;
  const GatewayError error = decode_error(answer.body, options_.limits);
  // A request over the member's --max-request-bytes (refused by etcd, or by its gRPC server when
  // far over): what the operator must set for a replica's largest save.
  const bool too_large = error.message.find("request is too large") != std::string::npos ||
                         error.message.find("larger than max") != std::string::npos;
  throw Error(ErrorCategory::protocol,
              fmt::format("etcd refused {} (HTTP {}, code {}): {}{}", path, answer.status,
                          error.code, error.message,
                          too_large ? fmt::format("; start every etcd member with "
                                                  "--max-request-bytes={} (docs/TRACKER.md, "
                                                  "\"Running replicas\")",
                                                  replica::kStoreRequestBytes)
                                    : ""));
}

RangeResult EtcdClient::range(const Range& range) {
  // Values are base64 in the answer: 4 bytes for every 3.
  const std::size_t answer_bytes = range.answer_bytes / 3 * 4;
  return decode_range(
      ok_body("/v3/kv/range", post("/v3/kv/range", encode_range(range), answer_bytes)), range,
      options_.limits);
}

TxnResult EtcdClient::txn(const Txn& txn) {
  return decode_txn(ok_body("/v3/kv/txn", post("/v3/kv/txn", encode_txn(txn))), txn,
                    options_.limits);
}

Lease EtcdClient::lease_grant(std::int64_t ttl_s) {
  LOCO_ASSERT(ttl_s > 0, "a lease needs a positive TTL");
  return decode_lease_grant(
      ok_body("/v3/lease/grant", post("/v3/lease/grant", encode_lease_grant(ttl_s))),
      options_.limits);
}

std::int64_t EtcdClient::lease_keepalive(LeaseId lease) {
  return decode_keepalive(
      ok_body("/v3/lease/keepalive", post("/v3/lease/keepalive", encode_lease_id(lease))),
      options_.limits);
}

void EtcdClient::lease_revoke(LeaseId lease) {
  const Answer answer = post("/v3/lease/revoke", encode_lease_id(lease));
  if (answer.status != 200 && decode_error(answer.body, options_.limits).code == kGrpcNotFound)
    return;
  ok_body("/v3/lease/revoke", answer);
}

}  // namespace loco::etcd
