#include "loco/sim/manifest_memo.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace loco::sim {
namespace {

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool same_state(const PeerState& a, const PeerState& b) {
  return a.round == b.round && same_bytes(a.theta, b.theta) && same_bytes(a.momentum, b.momentum);
}

}  // namespace

ManifestMemo::ManifestMemo(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

proto::StateManifest ManifestMemo::manifest(const PeerState& state) {
  const auto it =
      std::ranges::find_if(entries_, [&](const Entry& e) { return same_state(e.state, state); });
  if (it != entries_.end()) {
    if (it != entries_.begin()) {
      Entry found = std::move(*it);
      entries_.erase(it);
      entries_.push_front(std::move(found));
    }
    return entries_.front().manifest;
  }
  ++hashed_;
  if (entries_.size() == capacity_) entries_.pop_back();
  entries_.push_front(Entry{.state = state, .manifest = state.manifest()});
  return entries_.front().manifest;
}

}  // namespace loco::sim
