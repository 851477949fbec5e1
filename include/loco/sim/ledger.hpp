#pragma once
// What every simulated peer did to the shared state, checked as it happens (so after every
// event): the invariants of the swarm protocol (docs/SCALE.md).
//   1. no round applied twice: the rounds a peer key installs rise strictly, each one above the
//      state it held, across crashes and restarts;
//   2. survivors identical: every peer that installs round r installs the same state hash;
//   3. no partial average: a ring's result is the mean of every member's update (within the
//      codec's error), or their trimmed mean when the group trims (all_reduce.hpp), never of
//      some of them;
//   4. recovery: a state fetched for round r hashes to what the peers that installed r hold;
//   5. the tracker never commits a round twice, and its committed round never goes back;
//   6. gossip mode: every member that applies a group's round applies the same state hash (the
//      group is identified by round, attempt and members; a peer alone is a group of one).
//   7. every committed round is held by the tracker or a live member until a later round is
//      (holding_check.hpp, which reports here through violation()).
// A violation is recorded with its virtual time, not thrown: the test prints them with the seed.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/core/time.hpp"
#include "loco/proto/round_formation.hpp"

namespace loco::sim {

class Ledger {
 public:
  // tolerance: the largest error of a mean the codec may make, relative to the largest |Δ|; a
  // negative value skips the check (it costs a pass over every member's update).
  explicit Ledger(double mean_tolerance) : tolerance_(mean_tolerance) {}

  void all_reduce_started(TimePoint now, const proto::PeerKey& peer, std::uint64_t round,
                          std::uint32_t attempt, std::span<const float> delta);
  // `trim`: the contributions each coordinate's mean left out on each side (0: the plain mean);
  // `tokens`: the members' tokens of a weighted round (empty: each counts once).
  void all_reduce_done(TimePoint now, const proto::PeerKey& peer, std::uint64_t round,
                       std::uint32_t attempt, const std::vector<proto::PeerKey>& members,
                       std::size_t trim, std::span<const std::uint64_t> tokens,
                       std::span<const float> mean);
  void installed(TimePoint now, const proto::PeerKey& peer, std::uint64_t from_round,
                 std::uint64_t round, const Digest& hash);
  // Gossip mode: invariants 1 and 6 (peers of a round differ by design: no 2).
  void group_installed(TimePoint now, const proto::PeerKey& peer, std::uint64_t from_round,
                       std::uint64_t round, std::uint32_t attempt,
                       const std::vector<proto::PeerKey>& members, const Digest& hash);
  void fetched(TimePoint now, const proto::PeerKey& peer, std::uint64_t round, const Digest& hash);
  // Gossip mode: a peer copied a neighbour's state; a group must have installed it, and the peer's
  // rounds continue from the neighbour's (its own earlier rounds are another lineage).
  void copied(TimePoint now, const proto::PeerKey& peer, std::uint64_t round, const Digest& hash);
  void committed(TimePoint now, std::uint64_t round, const Digest& hash);

  // A broken invariant, with its virtual time.
  void violation(TimePoint now, const std::string& what);
  const std::vector<std::string>& violations() const { return violations_; }
  std::uint64_t installs() const { return installs_; }
  // Gossip mode: the rounds peers applied alone (a group of one), of all they applied, and of
  // those the ones whose group's wait ran out (the others: a round whose roster did not list it).
  std::uint64_t applied_alone() const { return applied_alone_; }
  void gossip_wait_expired() { ++gossip_waits_expired_; }
  std::uint64_t gossip_waits_expired() const { return gossip_waits_expired_; }
  std::uint64_t highest_round() const { return highest_; }
  // The state every peer that installed `round` installed (invariant 2: one), none when no peer
  // installed it (a round peers only fetched, or none reached).
  std::optional<Digest> installed_hash(std::uint64_t round) const;

 private:
  void applied(TimePoint now, const proto::PeerKey& peer, std::uint64_t from_round,
               std::uint64_t round);

  double tolerance_;
  // Updates of rings under way, by (round, attempt), then member.
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::map<proto::PeerKey, std::vector<float>>>
      updates_;
  std::map<std::uint64_t, Digest> installed_hash_;  // by round
  std::map<std::uint64_t, Digest> committed_hash_;  // by round, from the tracker
  // Gossip groups' results, by (round, attempt, members).
  std::map<std::tuple<std::uint64_t, std::uint32_t, std::vector<proto::PeerKey>>, Digest>
      group_hash_;
  std::map<proto::PeerKey, std::uint64_t> last_round_;  // applied or fetched, per key
  std::uint64_t highest_ = 0;
  std::uint64_t installs_ = 0;
  std::uint64_t applied_alone_ = 0;
  std::uint64_t gossip_waits_expired_ = 0;
  std::vector<std::string> violations_;
};

}  // namespace loco::sim
