#pragma once
// What the tracker of one run is told by its operator (loco-tracker's config file maps onto it).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/proto/round_pace.hpp"
#include "loco/proto/token_weights.hpp"
#include "loco/proto/tracker_messages.hpp"
#include "loco/secure/identity.hpp"

namespace loco::proto {

// Who may join. The operator chooses explicitly: an open run admits anyone with the run id.
struct AdmissionPolicy {
  enum class Kind { open, token, allowlist };
  Kind kind = Kind::token;
  std::string token;                       // Kind::token: the shared join token
  std::vector<secure::PublicKey> allowed;  // Kind::allowlist: these keys only
};

// Checkpoint custody (docs/TRACKER.md): every `every` committed rounds the tracker pulls the
// majority state from one peer that holds it, for its driver to store; it serves the latest copy
// it holds when no live peer holds the run's state.
struct CustodyConfig {
  std::uint32_t every = 0;  // rounds; 0: no custody (loco-tracker's default is on)
  std::uint64_t max_state_bytes = std::uint64_t{64} << 20;  // a larger state is not pulled
  std::uint64_t pull_bytes_per_s = 0;                       // 0: unpaced
  // The holders of a round just committed install it before they serve it: a round's first pull
  // waits this long after it is due.
  Duration settle = std::chrono::milliseconds(200);
  // After every holder failed or refused (not serving that round yet): again after `settle`,
  // doubling up to `retry`.
  Duration retry = std::chrono::seconds(1);
};

struct TrackerCoreConfig {
  std::string run_id;
  AdmissionPolicy admission;
  // The settings that fix the shared state (model, seed, codec, strategy): a joining peer must
  // state exactly these, or it is refused naming the first that differs.
  std::vector<Setting> settings;
  // The hash of the state these settings start a run from (train/genesis.hpp), computed by the
  // tracker's driver from the run's config: a peer whose genesis differs is refused, and no member
  // can choose it.
  Digest genesis{};
  std::uint32_t shard_count = 64;  // data shards; at most this many members at once
  // Members that may join from one network (an IPv4 address, an IPv6 /64): a household behind
  // one NAT fits, one machine cannot take every shard of the run. 0: no limit.
  std::uint32_t max_members_per_network = 4;
  // A peer cut off for misbehaving may not join again for this long.
  Duration bar_time = std::chrono::minutes(10);
  // Messages one connection may send: `message_burst` at once, refilled at `message_rate` a
  // second; past that it is cut off, so that no member makes the tracker decode and answer small
  // messages as fast as it can send them. An honest peer sends a few a second (heartbeats, ready,
  // done, reports), and custody chunks only as fast as the tracker asks for them (4 in flight).
  // 0: no limit.
  double message_rate = 50;
  std::uint32_t message_burst = 500;
  Duration heartbeat_interval = std::chrono::seconds(2);
  Duration eviction_timeout = std::chrono::seconds(10);
  // The tracker's own stall is not its members' silence. An input that comes more than this after
  // a silence deadline it asked to be woken for means the tracker could not run (a long turn of
  // its event loop, a starved or suspended process), and the heartbeats of that time may still be
  // waiting unread: every member due for eviction by the next heartbeat interval gets until then.
  // A member cannot cause it except by stalling the tracker, and then only delays evictions.
  // 0: evict at the deadline whenever the input comes.
  Duration stall_grace = std::chrono::seconds(1);
  Duration view_interval = std::chrono::milliseconds(500);  // views go out at most this often
  // A broadcast is one message to every member, whatever changed: with many members the views go
  // out less often, so that they average at most this many messages a second (up to 1,000 members:
  // every view_interval; 10,000: every 5 s, against 5,000 heartbeat acks a second at 2 s
  // heartbeats). 0: every view_interval.
  double view_send_rate = 2'000;
  std::uint32_t min_peers = 1;  // a round needs at least this many members
  // A tracker restarted from its state file forms no round for up to this long after it starts,
  // until every member of its last saved view has joined again (peers reconnect within a second
  // or two of a quick restart, tracker_reconnect() in backoff.hpp): otherwise the first one back
  // trains a round alone and the others throw their phase away. Then it goes on with whoever is
  // there. 0: no wait.
  Duration restart_grace = std::chrono::seconds(5);
  // The timed quorum waits this long after the first peer is ready (longer than a newcomer's
  // state recovery, or newcomers never get in).
  Duration join_timeout = std::chrono::seconds(30);
  // A member that is not ready (or still fetching the state) when this many rounds form without
  // it, since it last took part in a committed round, is no longer waited for: a member that
  // never trains or never ends its fetch delays at most this many rounds by join_timeout.
  std::uint32_t wait_rounds = 3;
  // Rounds bounded by time (the run's strategy.round-seconds, docs/STRATEGIES.md): each group
  // weighs its members' updates by their tokens, clamped as token_weights.hpp says (step_tokens
  // 0: fixed-H rounds, the plain mean), and a member still training straggler_wait after the
  // first is ready is left out of the round rather than waited for (0: join_timeout).
  TokenWeighting token_weighting;
  Duration straggler_wait{};
  // Rounds paced by the tracker (strategy.tracker-paced, round_pace.hpp): each group tells its
  // members their next phase, H × the median member's measured step time, and the straggler wait
  // is kStragglerShare of that phase (straggler_wait until a phase is known). steps 0: off.
  RoundPacing pacing;
  Duration round_timeout = std::chrono::minutes(5);  // a group that has not finished: aborted
  // Once a state holds a majority of the group, the others have this long to report theirs
  // before the round commits without them (they fetch it): a member that goes silent after the
  // exchange delays a round by this much, not by round_timeout.
  Duration report_grace = std::chrono::seconds(10);
  // A member that reports a failure naming another waits this long for the tracker to see the
  // other leave (a crash): if it does, the retry goes on without it alone; if not, the retry has
  // both after the accuser's first report of the round, and neither after a later one, so that
  // accusing costs the accuser as much as the accused.
  Duration accusation_grace = std::chrono::seconds(2);
  // An accuser that took itself out that way (no one confirmed it), or a member whose signed mean
  // was disputed by a second partner (checked owners), then sits out this many rounds, twice as
  // many each time it happens again: one member that accuses or lies at every round stalls at most
  // one round in this many, not every round. 0: no bench.
  std::uint32_t accusation_bench_rounds = 10;
  // A dispute between a checked owner and its checker is judged by a third member of the group
  // (segment_judge.hpp): the judge decides with what came within three quarters of this, and a
  // verdict not in by then leaves the dispute to the counting rule (tracker_judging.cpp).
  Duration judge_grace = std::chrono::seconds(40);
  // At most this many relayed links in a group (relay_plan.hpp's max_unreachable); 0: as many as
  // its relays' budgets allow.
  std::uint32_t max_relayed_links = 0;
  std::uint32_t max_attempts = 8;   // per round; then the peers keep training and retry
  float update_norm_limit = 10.0f;  // an update above this multiple of the median is refused
  // The share of a group's contributions the direct exchange's owners leave out of each
  // coordinate's mean, from each side (trim_count()): a minority of poisoned updates is cut off
  // instead of averaged in (bench-sim-attacks: two liars of eight within 1.2% of a clean run's
  // loss at 0.25, which costs a clean run nothing measurable). 0: the plain mean.
  float trim = 0.25f;
  // Checked owners (owner_check.hpp): the direct exchange's every segment is reduced by its owner
  // and by a checker, and both sign the result, so that an owner cannot return a wrong mean
  // unnoticed; it costs each member about twice the reduce-scatter's upload.
  bool check_owners = true;
  std::uint32_t donors_per_resync = 3;
  // Reachability (tracker_reachability.cpp, docs/TRACKER.md): at each join the tracker dials the
  // address a peer registered, once, and lists it reachable only if the peer answers there with
  // its own key within probe_timeout (a restarted peer listens on another port: its earlier
  // measurement says nothing of the new one). At most max_probes are under way at once (later
  // joins wait their turn), and one key, like one address, is probed at most probes_per_interval
  // times in any probe_interval: a join past that waits for its probe until the oldest of those
  // is probe_interval old, so joining again and again cannot make the tracker dial hosts at a
  // peer's will.
  Duration probe_timeout = std::chrono::seconds(3);
  std::uint32_t max_probes = 16;
  Duration probe_interval = std::chrono::seconds(60);
  std::uint32_t probes_per_interval = 4;
  CustodyConfig custody;
  // The run's final round (train/run_end.hpp, from the run config's train.steps; 0: the run
  // declares no end): once it commits, no round forms after it, the tracker pulls its state for
  // custody at once (custody on), tells the members that hold it when it is kept (RunEnded), and
  // never goes back to an older state: a newcomer fetches the final one.
  std::uint64_t final_round = 0;
  // Gossip mode (docs/DESIGN.md §1.6): groups average among themselves, nothing is committed, and a
  // peer that joins more than gossip_max_lag rounds behind the round most members are at copies
  // a neighbour's state from there (tracker_gossip.cpp): a peer behind stays behind (every peer
  // does one round a phase), and its partners would wait for it, so by default any lag copies.
  // A membership change takes effect in the groupings gossip_round_lead rounds after the newest
  // round a member reports (gossip_roster.hpp): a member that reported round F must train a whole
  // inner phase before it groups round F + 2, so the view reaches everyone before anyone groups
  // the round it changes.
  bool gossip = false;
  std::uint64_t gossip_max_lag = 0;
  std::uint64_t gossip_round_lead = 2;
  // A member's reported round may be at most this far past the run's round (the median + 1): an
  // honest peer waits for its group there, and one that says it is further ahead would otherwise
  // push every membership change that far into the future.
  std::uint64_t gossip_round_window = 16;
};

}  // namespace loco::proto
