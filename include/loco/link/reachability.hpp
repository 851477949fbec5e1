#pragma once
// Which node can reach which: network partitions and one-way reachability (a NAT or a firewall
// that lets a peer's packets out but nothing back in). Pure data, no clock: the simulator asks
// reachable(from, to) for every connection attempt and every chunk. (net/ cannot cut a real
// loopback path this way; it keeps its stall and drop faults, settings.hpp.)
//
// Nodes are on side 0 unless placed elsewhere; nodes on different sides cannot reach each other
// in either direction, and a blocked direction fails even within a side. A node behind a NAT
// (a home router) accepts no connection from elsewhere, while the connections it opens carry
// both ways: a property of the host, not a fault, so heal() leaves it.

#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace loco::link {

class Reachability {
 public:
  using Node = std::uint32_t;

  bool reachable(Node from, Node to) const;
  // Both directions work: what a TCP connection needs (the handshake goes both ways).
  bool connected(Node a, Node b) const { return reachable(a, b) && reachable(b, a); }

  // A partition: `node` moves to `side`; side 0 is where everyone starts.
  void place(Node node, std::uint32_t side);
  // One-way: nothing from `from` reaches `to` (the other direction is untouched).
  void block(Node from, Node to);
  void unblock(Node from, Node to);
  // Everyone back on side 0, nothing blocked.
  void heal();

  void put_behind_nat(Node node) { behind_nat_.insert(node); }
  // Whether a connection opened by another node can reach `node`.
  bool accepts_connections(Node node) const { return !behind_nat_.contains(node); }

  bool whole() const { return sides_.empty() && blocked_.empty(); }

 private:
  std::uint32_t side(Node node) const;

  std::map<Node, std::uint32_t> sides_;  // only nodes off side 0
  std::set<std::pair<Node, Node>> blocked_;
  std::set<Node> behind_nat_;
};

}  // namespace loco::link
