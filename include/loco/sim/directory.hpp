#pragma once
// Who is who in a simulation: a node's identity key (what the secure handshake would have
// authenticated) and the node that holds a key. Peers' listen addresses are "sim:<node>".

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "loco/core/assert.hpp"
#include "loco/secure/identity.hpp"
#include "loco/sim/network.hpp"

namespace loco::sim {

class Directory {
 public:
  // A key is added once: its node never changes (PeerNode keeps the last one it looked up).
  void add(NodeId node, const secure::PublicKey& key) {
    LOCO_ASSERT(!nodes_.contains(key), "a key added to the directory twice");
    if (keys_.size() <= node) keys_.resize(node + 1);
    keys_[node] = key;
    nodes_[key] = node;
  }
  const secure::PublicKey& key(NodeId node) const { return keys_.at(node); }
  NodeId node(const secure::PublicKey& key) const { return nodes_.at(key); }
  bool knows(const secure::PublicKey& key) const { return nodes_.contains(key); }
  static std::string address(NodeId node) { return "sim:" + std::to_string(node); }

 private:
  // Simulated keys are drawn uniformly: their first eight bytes hash them well enough.
  struct KeyHash {
    std::size_t operator()(const secure::PublicKey& key) const {
      std::size_t h = 0;
      std::memcpy(&h, key.bytes.data(), sizeof h);
      return h;
    }
  };
  std::vector<secure::PublicKey> keys_;
  std::unordered_map<secure::PublicKey, NodeId, KeyHash> nodes_;
};

}  // namespace loco::sim
