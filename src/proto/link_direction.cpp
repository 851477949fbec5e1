#include "loco/proto/link_direction.hpp"

namespace loco::proto {

LinkDirection link_direction(Reachability self, Reachability other) {
  const bool self_open = self != Reachability::unreachable;
  const bool other_open = other != Reachability::unreachable;
  if (self_open && other_open) return LinkDirection::own_links;
  if (other_open) return LinkDirection::dial;
  if (self_open) return LinkDirection::await;
  return LinkDirection::unlinkable;
}

SendOn send_on(Reachability self, Reachability other, bool answer) {
  const LinkDirection direction = link_direction(self, other);
  if (direction == LinkDirection::dial) return SendOn::own;
  if (answer) return SendOn::asker;
  return direction == LinkDirection::await ? SendOn::their : SendOn::own;
}

}  // namespace loco::proto
