#pragma once
// Who opens the link between two members, from their reachability as the tracker measured it
// (tracker_messages.hpp, Reachability): one rule for both drivers, net::PeerMesh and the
// simulator's sim::PeerNode (docs/PROTOCOL.md, "Who dials").
//
// Two reachable members: each sends on the link it opened and receives on the other's (as before
// reachability was measured: nobody has to agree who dials). A member not measured yet (the first
// seconds after its join) counts as reachable, as every member did before: at worst a link to it
// fails once and the round's retry follows the measurement. A reachable and an unreachable one:
// the unreachable member dials (its router lets it out, not in) and both send on that one link;
// it opens the link when a round's group lists them both (link_open), since the reachable member
// cannot ask for it. Two unreachable members cannot link directly: their link goes through a
// relay the group message names (relay_plan.hpp, relay_core.hpp), and a fetch from an
// unreachable donor is never asked for (the tracker names reachable donors only).

#include <cstddef>
#include <cstdint>

#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {

enum class LinkDirection {
  own_links,   // each end sends on the link it opened
  dial,        // this end opens the one link, and both send on it
  await,       // the other end opens the one link: send on it once it is there
  unlinkable,  // neither end can be reached: tried as own_links (it may work on one LAN)
};

LinkDirection link_direction(Reachability self, Reachability other);

// Messages a driver holds for a link the other member has not opened yet, in number and in bytes
// (awaiting_links.hpp); past either the link is lost (the member never dialled).
inline constexpr std::size_t kMaxAwaitingMessages = 4096;
inline constexpr std::size_t kMaxAwaitingBytes = std::size_t{512} << 20;

// The link a message goes on, as the peer core tells its driver.
enum class SendOn : std::uint8_t {
  own,    // the link this peer opened, dialled at the address the view lists if there is none
  their,  // the link the other member opened, held for until it is there (await)
  // An answer to a request (a state fetch's): the link the asker opened, the newest of its key,
  // on which its request came; dropped if it has none. So the process that asked is answered,
  // not an older process of the same key this peer still has a link to (a restarted peer whose
  // old process is frozen), and nothing is kept for an asker that went away: it asks again.
  asker,
};

// Where a message to `other` goes; `answer`: it answers a request `other` sent. When this peer
// dials (link_direction's dial), the request came on its own link, and so does the answer.
SendOn send_on(Reachability self, Reachability other, bool answer);

}  // namespace loco::proto
