#pragma once
// The bodies of etcd v3's JSON gateway (grpc-gateway over etcd's gRPC API, served on the client
// port under /v3/ by etcd 3.4, Debian 12's): requests written, responses read.
//
// The gateway speaks protobuf's JSON mapping: keys and values are base64, 64-bit integers are
// decimal strings, and fields at their default (0, false, empty) are left out. A streaming call
// (lease keepalive) wraps each message as {"result": ...} or {"error": ...}, one per line.
//
// The store's answers are not trusted blindly (a wrong endpoint, a proxy, a bug): a body is
// parsed only under GatewayLimits, counts and base64 lengths are checked before anything is
// allocated from them, and any departure from the shape is Error(format) naming the field.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "loco/replica/fenced_state.hpp"
#include "loco/replica/kv_store.hpp"

namespace loco::etcd {

// The store's values (replica/kv_store.hpp: what replicas need of etcd, which this module
// writes and reads on the wire and serves), named here as etcd's own.
using replica::Compare;
using replica::DeleteRange;
using replica::KeyValue;
using replica::KvStore;
using replica::Lease;
using replica::LeaseId;
using replica::Op;
using replica::Put;
using replica::Range;
using replica::RangeResult;
using replica::Txn;
using replica::TxnResult;

// A value as large as one request etcd takes when set up for replicas (a state saved whole:
// replica::kStoreRequestBytes), and its answer in base64 with room to spare.
struct GatewayLimits {
  std::size_t max_body_bytes = std::size_t{16} << 20;
  std::size_t max_kvs = 10'000;  // keys in one answer
  std::size_t max_key_bytes = 4096;
  std::size_t max_value_bytes = replica::kStoreRequestBytes;
};

std::string encode_range(const Range& range);
std::string encode_txn(const Txn& txn);
std::string encode_lease_grant(std::int64_t ttl_s);
std::string encode_lease_id(LeaseId lease);  // keepalive and revoke

// `range` is the request: keys outside it, or more than its limit, are refused.
RangeResult decode_range(std::string_view body, const Range& range, const GatewayLimits& limits);
// `txn` is the request: its ops say which responses to expect, in which order.
TxnResult decode_txn(std::string_view body, const Txn& txn, const GatewayLimits& limits);
Lease decode_lease_grant(std::string_view body, const GatewayLimits& limits);
// The first message of the keepalive stream: the remaining TTL, 0 when the lease is gone.
std::int64_t decode_keepalive(std::string_view body, const GatewayLimits& limits);

// An error answer, {"error": ..., "code": n, ...}: its gRPC code (5 is NOT_FOUND) and message.
struct GatewayError {
  int code = 0;
  std::string message;
};
GatewayError decode_error(std::string_view body, const GatewayLimits& limits);

}  // namespace loco::etcd
