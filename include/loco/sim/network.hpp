#pragma once
// Simulated links between simulated nodes, built from the link model net/ emulates with
// (link/shaper.hpp): every node has one access link (upload and download token buckets, one-way
// latency, jitter, loss as a retransmission delay, a stream window); a connection between two
// nodes gets a pacer from each end's link, exactly as net::Connection does. Reachability
// (link/reachability.hpp) cuts paths: partitions and one-way blocks.
//
// The network carries protocol messages above the secure channel: bodies travel in the clear
// and the channel's cost is modelled (frame overhead in bytes, handshake and AEAD time); see
// docs/SCALE.md for why.
//
// Connections behave as TCP connections do, as far as the protocols can tell:
// - one connection per pair of nodes, opened by the first send (or connect()) from either end;
//   both ends are told on_open() two round trips later (TCP's and the secure channel's
//   handshakes), or the opener is told on_close() if the other host is down or behind a NAT
//   (after connect_timeout) or has no process listening (refused: after one round trip); a
//   connection a node behind a NAT opened carries both ways;
// - messages arrive whole, in order, once: release from the sender's pacer, then a read paced
//   by the receiver's download bucket;
// - a process that dies (kill(notify = true)) resets its connections: the other ends learn after
//   its latency. A host that vanishes (notify = false) or a path that a partition cuts says
//   nothing: bytes stop getting through, and an end that sends learns on_close() stall_timeout
//   later, as a TCP user timeout would tell it;
// - a node that connects again while the other end still holds its old connection replaces it
//   without a close (as loco-tracker does with a second connection from the same key).

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "loco/link/reachability.hpp"
#include "loco/link/shaper.hpp"
#include "loco/sim/event_loop.hpp"

namespace loco::sim {

using NodeId = std::uint32_t;

struct NetworkConfig {
  std::uint64_t seed = 0;
  std::size_t frame_overhead = 40;    // bytes the secure channel adds to a message
  double crypto_bytes_per_s = 1.1e9;  // AEAD (docs/PROTOCOL.md, measured); 0: free
  Duration handshake_cost = std::chrono::microseconds(300);  // key agreement + signatures
  Duration connect_timeout = std::chrono::seconds(10);
  Duration stall_timeout = std::chrono::seconds(15);
};

class NodeHandler {
 public:
  virtual ~NodeHandler() = default;
  virtual void on_open(NodeId peer) = 0;
  virtual void on_message(NodeId from, std::uint16_t type, std::span<const std::byte> body) = 0;
  virtual void on_close(NodeId peer, const std::string& why) = 0;
};

class Network {
 public:
  Network(EventLoop& loop, NetworkConfig config);
  ~Network();

  // A host with its access link, down until attach().
  NodeId add_node(const link::LinkSettings& settings);
  // The node's process is up and handles its connections.
  void attach(NodeId node, NodeHandler* handler);
  // The process ends: its connections reset (notify: the other ends are told) or go silent (the
  // host vanished: nobody is told, connects to it time out) until it is attached again.
  void kill(NodeId node, bool notify);

  void connect(NodeId from, NodeId to);
  // A body shared by several sends (a broadcast) is not copied.
  using Body = std::shared_ptr<const std::vector<std::byte>>;
  void send(NodeId from, NodeId to, std::uint16_t type, std::vector<std::byte> body);
  void send(NodeId from, NodeId to, std::uint16_t type, Body body);
  // An orderly close by `from`: what it sent still arrives, then `to` is told.
  void close(NodeId from, NodeId to);
  bool is_open(NodeId a, NodeId b) const;

  link::Reachability& reachability() { return reach_; }
  const link::LinkSettings& settings(NodeId node) const;

  std::uint64_t bytes_sent(NodeId node) const { return hosts_.at(node).sent; }
  std::uint64_t bytes_received(NodeId node) const { return hosts_.at(node).received; }
  std::uint64_t messages_delivered() const { return delivered_; }

 private:
  struct Connection;
  struct Host {
    std::shared_ptr<link::LinkShaper> link;
    NodeHandler* handler = nullptr;
    bool reachable = true;          // false: the host vanished
    std::uint64_t incarnation = 0;  // of its process: attach() starts a new one
    std::uint64_t sent = 0;
    std::uint64_t received = 0;
    // The connection this node last sent on, if not retired (then it is connections_' entry for
    // its pair): a ring member sends every chunk to one successor, so mostly no table lookup.
    std::shared_ptr<Connection> last_used{};
  };
  using Key = std::uint64_t;  // the smaller node's id, then the larger's

  static Key key(NodeId a, NodeId b) { return a < b ? (Key{a} << 32) | b : (Key{b} << 32) | a; }
  // The end's process is the one that opened the connection, and it is still up.
  bool alive(const Connection& c, int side) const;
  std::shared_ptr<Connection> open_connection(NodeId from, NodeId to);
  std::shared_ptr<Connection> find_connection(NodeId from, NodeId to) const;
  void transmit(const std::shared_ptr<Connection>& c, int side, std::uint16_t type, Body body);
  void arrive(const std::shared_ptr<Connection>& c, int side, std::uint16_t type, Body body);
  void read(const std::shared_ptr<Connection>& c, int side);
  void stall(const std::shared_ptr<Connection>& c);
  // Removes the connection; tells `side`'s node at `at` (if it is still its connection).
  void retire(const std::shared_ptr<Connection>& c);
  void tell_closed(const std::shared_ptr<Connection>& c, int side, TimePoint at, std::string why);
  Duration crypto_time(std::size_t bytes) const;

  EventLoop& loop_;
  NetworkConfig config_;
  std::vector<Host> hosts_;
  std::unordered_map<Key, std::shared_ptr<Connection>> connections_;
  link::Reachability reach_;
  std::uint64_t next_connection_ = 1;
  std::uint64_t delivered_ = 0;
};

}  // namespace loco::sim
