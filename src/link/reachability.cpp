#include "loco/link/reachability.hpp"

namespace loco::link {

std::uint32_t Reachability::side(Node node) const {
  const auto it = sides_.find(node);
  return it == sides_.end() ? 0 : it->second;
}

bool Reachability::reachable(Node from, Node to) const {
  if (whole()) return true;
  return side(from) == side(to) && !blocked_.contains({from, to});
}

void Reachability::place(Node node, std::uint32_t side) {
  if (side == 0) {
    sides_.erase(node);
  } else {
    sides_[node] = side;
  }
}

void Reachability::block(Node from, Node to) {
  blocked_.insert({from, to});
}

void Reachability::unblock(Node from, Node to) {
  blocked_.erase({from, to});
}

void Reachability::heal() {
  sides_.clear();
  blocked_.clear();
}

}  // namespace loco::link
