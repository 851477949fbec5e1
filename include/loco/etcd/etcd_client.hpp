#pragma once
// A KvStore served by a real etcd cluster over its v3 JSON gateway (HTTP/1.1 POSTs of JSON to
// /v3/kv/range, /v3/kv/txn, /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke; Boost.Beast,
// as fetch/ and the tracker's status page use).
//
// Why the gateway and not gRPC: every call a tracker replica needs is a unary request (a
// keepalive is one message on the stream, then the stream is closed), the gateway ships in every
// etcd 3.x including Debian's 3.4, and it adds no code generator, no protobuf or gRPC runtime to
// a stack that already speaks HTTP with Beast. What it costs: JSON and base64 (~1.4x the bytes),
// a TCP connection per call (loopback or LAN: under a millisecond), and no server-pushed watch,
// so followers poll (election.hpp). docs/TRACKER.md, "Running replicas".
//
// Endpoints are tried in turn: a call goes to the member that answered last, and to the next one
// when that member cannot be reached, so the loss of one member of three costs one failed
// connection, not the run. A call whose answer was lost may still have been applied when it is
// sent again to the next member: write transactions whose second run fails its compare (a key
// created only if absent) or writes the same bytes again. Plain HTTP on a network the operator
// trusts; TLS is not built yet.

#include <chrono>
#include <string>
#include <vector>

#include "loco/etcd/gateway_json.hpp"
#include "loco/replica/kv_store.hpp"

namespace loco::etcd {

struct EtcdEndpoint {
  std::string host;
  std::string port;
};

// "http://host:port" or "host:port"; Error(config) for anything else (https: not built yet).
EtcdEndpoint parse_etcd_endpoint(std::string_view url);

struct EtcdClientOptions {
  std::vector<EtcdEndpoint> endpoints;  // the cluster's members
  // Per connect, write or read; a millisecond more for every 2,000 bytes of the request, or of
  // the answer a range expects (Range::answer_bytes).
  std::chrono::milliseconds io_timeout = std::chrono::seconds(2);
  GatewayLimits limits;
};

class EtcdClient final : public KvStore {
 public:
  explicit EtcdClient(EtcdClientOptions options);

  RangeResult range(const Range& range) override;
  TxnResult txn(const Txn& txn) override;
  Lease lease_grant(std::int64_t ttl_s) override;
  std::int64_t lease_keepalive(LeaseId lease) override;
  void lease_revoke(LeaseId lease) override;  // a lease already gone is not an error

 private:
  struct Answer {
    unsigned status = 0;
    std::string body;
  };
  // POSTs `body` to `path` on the current member, then on each other one until one answers.
  // `answer_bytes`: how large the answer may be, for the time it is waited for.
  Answer post(std::string_view path, const std::string& body, std::size_t answer_bytes = 0);
  // The body of a 200 answer; Error(protocol) with etcd's message for any other.
  std::string ok_body(std::string_view path, const Answer& answer) const;

  EtcdClientOptions options_;
  std::size_t current_ = 0;  // the member that answered last
};

}  // namespace loco::etcd
