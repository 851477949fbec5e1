#pragma once
// A simulated volunteer whose training is modelled, for thousands of peers (docs/SCALE.md): θ ‖ v
// and a ComputeModel standing in for the inner loop and the strategy (DiLoCo's outer step). Like a
// strategy process (strategy_process.hpp), it is the process of a PeerNode (peer_node.hpp), the
// driver of its protocol core, and it talks to that core only through a round::ComputeLink: its
// commands (ready, round done, serve...) are the link's, and it takes the core's events from the
// Mailbox the link posts them to. What a mean, a commit, an abort or a fetched state does to it is
// round::round_step's rule, the one loco-peer's SwarmGroup follows (round/round_step.hpp). It has
// no thread: the node hands it the events as the link posts them, on the event loop.
//
// What it models:
//   - the inner phase: H × its step time (or a phase clocked by time), then a pseudo-gradient,
//     which a lying member (behaviour.hpp) replaces before it says ready;
//   - the state θ ‖ v: on the round's mean, the outer step and round_done(hash); on the commit of
//     that hash, the install (checkpointed: the disk); in gossip mode the group's θ̄, v̄ and the
//     outer step with Δ̄, installed at once; a fetched state loaded;
//   - a fetch the tracker orders stops the inner phase under way (it trains on a state the run has
//     left), where a strategy peer trains on until the fetched state lands.
// It tells the Ledger what it loads from a fetch (copied, in gossip mode: a neighbour's state,
// hashed as loaded) and the rounds it installs in gossip mode; the node tells it the rest (the
// collectives, the commits), for both kinds of process.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/proto/state_manifest.hpp"
#include "loco/round/compute_link.hpp"
#include "loco/round/swarm_events.hpp"

namespace loco::sim {

class PeerNode;
struct PeerWorld;
struct PeerDisk;

// A peer's state: θ ‖ v at a round.
struct PeerState {
  std::uint64_t round = 0;
  std::vector<float> theta;
  std::vector<float> momentum;

  std::vector<std::byte> bytes() const;
  proto::StateManifest manifest() const;
  // From a fetched state; false when the size is not dim x 2 floats.
  bool load(std::uint64_t at_round, std::span<const std::byte> bytes);
};

class ModelledProcess {
 public:
  enum class Phase { joining, training, waiting, fetching };

  // `node` (its network side), `world` and `disk` outlive this.
  ModelledProcess(PeerNode& node, const PeerWorld& world, PeerDisk& disk);

  // Joins the run holding the disk's checkpoint if there is one, else round 0.
  void start();
  // The node's, after the link posted an event: takes every event waiting.
  void take_events();

  round::Mailbox& mailbox() { return mailbox_; }
  round::SharedStateGuard& guard() { return guard_; }
  const PeerState& state() const { return state_; }
  const Digest& state_hash() const { return state_hash_; }
  std::uint64_t rounds_installed() const { return installed_; }
  // Gossip mode: what it averages this round, θ ‖ v ‖ Δ (the Ledger checks the mean against it);
  // null in all-reduce mode, where the core's contribution is this peer's update.
  const std::vector<float>* gossip_packed() const { return gossip_packed_.get(); }

 private:
  void on_event(const round::SwarmEvent& e);
  void start_training();
  void finish_training();
  std::uint32_t steps_a_phase() const;  // H, or the steps that fit in a phase clocked by time
  // The round's mean: the state it leads to (the outer step) and its hash reported.
  void on_mean(const round::SwarmEvent& e);
  void install();
  // Gossip mode: the group's θ̄ and v̄ with the outer step on Δ̄, installed at once.
  void apply_gossip(const round::SwarmEvent& e);
  void on_fetched(const round::SwarmEvent& e);
  // state_ changed to the state `manifest` describes: serve it (the core tells the tracker).
  void serve_current(proto::StateManifest manifest);
  // Its manifest: from the world's memo when there is one (the same manifest).
  proto::StateManifest manifest_of(const PeerState& state) const;
  bool gossip() const;
  round::ComputeLink& link();

  PeerNode& node_;
  const PeerWorld& world_;
  PeerDisk& disk_;
  round::Mailbox mailbox_;
  round::SharedStateGuard guard_;  // the link's; this process serves copies, not in place

  Phase phase_ = Phase::joining;
  PeerState state_;
  Digest state_hash_{};         // state_'s, hashed once per state (BLAKE2b of all of it)
  std::uint64_t training_ = 0;  // which inner phase the pending timer ends
  std::uint64_t round_ = 0;     // the round it said ready for, until it ends (0: none)
  std::shared_ptr<const std::vector<float>> gossip_packed_;
  std::optional<PeerState> tentative_;  // the state the round's mean leads to
  proto::StateManifest tentative_manifest_;
  Digest mine_{};  // tentative_'s hash, reported for the round's latest attempt
  std::uint64_t installed_ = 0;
};

}  // namespace loco::sim
