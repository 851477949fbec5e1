#include "loco/sim/network.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/rng.hpp"

namespace loco::sim {
namespace {

// Trace record kinds.
enum : std::uint64_t { kOpen = 1, kDeliver = 2, kClose = 3, kKill = 4 };

}  // namespace

struct Network::Connection {
  struct Message {
    std::uint16_t type;
    Body body;
  };

  std::uint64_t id = 0;
  NodeId node[2]{};                // [0] opened it
  std::uint64_t incarnation[2]{};  // of each end's process when it opened
  std::unique_ptr<link::LinkPacer> pacer[2];
  bool open = false;
  bool gone = false;                 // retired: no new sends on it
  bool discard[2] = {false, false};  // nothing more is delivered to this end
  bool stalled = false;              // bytes stop getting through
  std::deque<Message> waiting[2];    // sent by this end before the handshake finished
  std::deque<Message> inbox[2];      // arrived for this end, not read yet
  bool reading[2] = {false, false};
  TimePoint next_read[2] = {TimePoint::min(), TimePoint::min()};
  TimePoint last_arrival[2] = {TimePoint::min(), TimePoint::min()};

  int side_of(NodeId n) const { return node[0] == n ? 0 : 1; }
};

Network::Network(EventLoop& loop, NetworkConfig config) : loop_(loop), config_(config) {}
Network::~Network() = default;

NodeId Network::add_node(const link::LinkSettings& settings) {
  hosts_.push_back(Host{.link = link::LinkShaper::create(settings, loop_.now())});
  return static_cast<NodeId>(hosts_.size() - 1);
}

const link::LinkSettings& Network::settings(NodeId node) const {
  return hosts_.at(node).link->settings();
}

void Network::attach(NodeId node, NodeHandler* handler) {
  Host& h = hosts_.at(node);
  h.handler = handler;
  h.reachable = true;
  ++h.incarnation;
}

void Network::kill(NodeId node, bool notify) {
  Host& h = hosts_.at(node);
  h.handler = nullptr;
  h.reachable = !notify ? false : h.reachable;
  loop_.record(kKill, node, notify ? 1 : 0);
  if (!notify) return;  // its connections go silent: the other ends stall when they send
  std::vector<std::shared_ptr<Connection>> mine;
  for (const auto& [k, c] : connections_)
    if (c->node[0] == node || c->node[1] == node) mine.push_back(c);
  // In the order of the other ends, whatever the hash table's: the trace is the seed's alone.
  std::ranges::sort(mine, {}, [](const auto& c) { return key(c->node[0], c->node[1]); });
  for (const auto& c : mine) {
    const int side = c->side_of(node);
    c->discard[side] = true;
    retire(c);
    // The kernel resets the connections of a dead process: the reset takes its latency.
    tell_closed(c, 1 - side, loop_.now() + settings(node).latency, "connection reset by peer");
  }
}

bool Network::is_open(NodeId a, NodeId b) const {
  const auto it = connections_.find(key(a, b));
  return it != connections_.end() && it->second->open && !it->second->stalled;
}

bool Network::alive(const Connection& c, int side) const {
  const Host& h = hosts_[c.node[side]];
  return h.handler != nullptr && h.incarnation == c.incarnation[side];
}

std::shared_ptr<Network::Connection> Network::find_connection(NodeId from, NodeId to) const {
  const std::shared_ptr<Connection>& last = hosts_[from].last_used;
  if (last && !last->gone && key(last->node[0], last->node[1]) == key(from, to)) return last;
  const auto it = connections_.find(key(from, to));
  return it != connections_.end() ? it->second : nullptr;
}

std::shared_ptr<Network::Connection> Network::open_connection(NodeId from, NodeId to) {
  if (auto c = find_connection(from, to)) {
    if (alive(*c, 0) && alive(*c, 1) && !c->stalled) {
      hosts_[from].last_used = c;
      return c;
    }
    // A process that came back replaces its old connection; the other end gets on_open again.
    c->discard[0] = c->discard[1] = true;
    retire(c);
  }
  auto c = std::make_shared<Connection>();
  c->id = next_connection_++;
  c->node[0] = from;
  c->node[1] = to;
  for (int side = 0; side < 2; ++side) {
    c->incarnation[side] = hosts_[c->node[side]].incarnation;
    c->pacer[side] = hosts_[c->node[side]].link->make_pacer(counter_u64(config_.seed, c->id, side));
  }
  connections_[key(from, to)] = c;
  hosts_[from].last_used = c;

  const Duration round_trip = settings(from).latency + settings(to).latency;
  if (!hosts_[to].reachable || !reach_.connected(from, to) || !reach_.accepts_connections(to)) {
    loop_.after(config_.connect_timeout, [this, c] {
      if (c->gone) return;
      retire(c);
      tell_closed(c, 0, loop_.now(), "connect timed out");
    });
  } else if (hosts_[to].handler == nullptr) {
    loop_.after(round_trip, [this, c] {
      if (c->gone) return;
      retire(c);
      tell_closed(c, 0, loop_.now(), "connection refused");
    });
  } else {
    // TCP's handshake, then the secure channel's: two round trips and the key agreement.
    loop_.after(2 * round_trip + config_.handshake_cost, [this, c] {
      if (c->gone) return;
      if (!alive(*c, 1) || !alive(*c, 0)) {
        retire(c);
        tell_closed(c, 0, loop_.now(), "connection refused");
        return;
      }
      c->open = true;
      loop_.record(kOpen, c->node[0], c->node[1]);
      for (int side = 0; side < 2; ++side) {
        auto waiting = std::move(c->waiting[side]);
        for (auto& m : waiting) transmit(c, side, m.type, std::move(m.body));
      }
      for (const int side : {1, 0})
        if (alive(*c, side) && !c->gone) hosts_[c->node[side]].handler->on_open(c->node[1 - side]);
    });
  }
  return c;
}

void Network::connect(NodeId from, NodeId to) {
  open_connection(from, to);
}

void Network::send(NodeId from, NodeId to, std::uint16_t type, std::vector<std::byte> body) {
  send(from, to, type, std::make_shared<const std::vector<std::byte>>(std::move(body)));
}

void Network::send(NodeId from, NodeId to, std::uint16_t type, Body body) {
  LOCO_ASSERT(from != to, "a node sends to itself");
  if (hosts_[from].handler == nullptr) return;
  const auto c = open_connection(from, to);
  const int side = c->side_of(from);
  if (!c->open) {
    c->waiting[side].push_back(Connection::Message{type, std::move(body)});
    return;
  }
  transmit(c, side, type, std::move(body));
}

void Network::close(NodeId from, NodeId to) {
  const auto it = connections_.find(key(from, to));
  if (it == connections_.end()) return;
  const auto c = it->second;
  const int side = c->side_of(from);
  c->discard[side] = true;
  retire(c);
  // The close follows the data already sent.
  const TimePoint at = std::max(loop_.now() + settings(from).latency, c->last_arrival[1 - side]);
  tell_closed(c, 1 - side, at, "closed by peer");
}

Duration Network::crypto_time(std::size_t bytes) const {
  if (config_.crypto_bytes_per_s <= 0) return Duration{0};
  return Duration(
      static_cast<Duration::rep>(static_cast<double>(bytes) * 1e9 / config_.crypto_bytes_per_s));
}

void Network::transmit(const std::shared_ptr<Connection>& c, int side, std::uint16_t type,
                       Body body) {
  const NodeId from = c->node[side];
  const NodeId to = c->node[1 - side];
  if (c->gone) return;
  if (c->stalled || !alive(*c, 1 - side) || !reach_.reachable(from, to)) {
    stall(c);  // lost: the sender learns when its TCP gives up
    return;
  }
  const std::size_t size = body->size() + config_.frame_overhead;
  const link::LinkPacer::SendDecision d = c->pacer[side]->on_send(loop_.now(), size);
  if (d.drop_connection) {  // a fault of the link settings (drop-at, drop-after-bytes)
    const TimePoint at = std::max(loop_.now(), d.release);
    c->discard[0] = c->discard[1] = true;
    retire(c);
    tell_closed(c, 0, at, "link fault: connection dropped");
    tell_closed(c, 1, at, "link fault: connection dropped");
    return;
  }
  if (d.release == kNever) {
    stall(c);
    return;
  }
  hosts_[from].sent += size;
  const TimePoint arrival = std::max(c->last_arrival[1 - side], d.release + crypto_time(size));
  c->last_arrival[1 - side] = arrival;
  loop_.at(arrival, [this, c, to_side = 1 - side, type, body = std::move(body)]() mutable {
    arrive(c, to_side, type, std::move(body));
  });
}

void Network::arrive(const std::shared_ptr<Connection>& c, int side, std::uint16_t type,
                     Body body) {
  if (c->discard[side] || c->stalled || !alive(*c, side)) return;
  if (!reach_.reachable(c->node[1 - side], c->node[side])) {  // cut while in flight
    stall(c);
    return;
  }
  c->inbox[side].push_back(Connection::Message{type, std::move(body)});
  if (c->reading[side]) return;
  c->reading[side] = true;
  read(c, side);
}

void Network::read(const std::shared_ptr<Connection>& c, int side) {
  while (!c->inbox[side].empty()) {
    if (c->discard[side] || c->stalled || !alive(*c, side)) {
      c->inbox[side].clear();
      break;
    }
    if (loop_.now() < c->next_read[side]) {
      if (c->next_read[side] == kNever) {
        stall(c);
        break;
      }
      loop_.at(c->next_read[side], [this, c, side] { read(c, side); });
      return;  // still reading
    }
    const Connection::Message m = std::move(c->inbox[side].front());
    c->inbox[side].pop_front();
    const std::size_t size = m.body->size() + config_.frame_overhead;
    c->next_read[side] = c->pacer[side]->on_receive(loop_.now(), size);
    const NodeId to = c->node[side];
    const NodeId from = c->node[1 - side];
    hosts_[to].received += size;
    ++delivered_;
    loop_.record(kDeliver, (std::uint64_t{from} << 32) | to, (std::uint64_t{m.type} << 32) | size);
    hosts_[to].handler->on_message(from, m.type, *m.body);
  }
  c->reading[side] = false;
}

void Network::stall(const std::shared_ptr<Connection>& c) {
  if (c->stalled) return;
  c->stalled = true;
  c->discard[0] = c->discard[1] = true;
  const TimePoint at = loop_.now() + config_.stall_timeout;
  for (int side = 0; side < 2; ++side) tell_closed(c, side, at, "stalled: nothing got through");
  loop_.at(at, [this, c] { retire(c); });
}

void Network::retire(const std::shared_ptr<Connection>& c) {
  if (c->gone) return;
  c->gone = true;
  const auto it = connections_.find(key(c->node[0], c->node[1]));
  if (it != connections_.end() && it->second == c) connections_.erase(it);
}

void Network::tell_closed(const std::shared_ptr<Connection>& c, int side, TimePoint at,
                          std::string why) {
  loop_.at(at, [this, c, side, why = std::move(why)] {
    if (!alive(*c, side)) return;
    // Replaced by a newer connection between the same nodes: this one's end is not news.
    const auto it = connections_.find(key(c->node[0], c->node[1]));
    if (it != connections_.end() && it->second != c) return;
    if (it != connections_.end()) retire(c);
    loop_.record(kClose, c->node[side], c->node[1 - side]);
    hosts_[c->node[side]].handler->on_close(c->node[1 - side], why);
  });
}

}  // namespace loco::sim
