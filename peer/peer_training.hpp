#pragma once
// run_peer's training phase (swarm_peer.hpp): the steps of train/step_loop.hpp, with what loco-peer
// does around them: the round lines on stdout, the progress lines, the heartbeats' figures, the
// shard the tracker assigns, and the checkpoint every --peer.checkpoint-rounds rounds.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "debug_faults.hpp"
#include "loco/fetch/shard_feed.hpp"
#include "loco/proto/tracker_messages.hpp"
#include "loco/round/peer_session.hpp"
#include "loco/secure/identity.hpp"
#include "loco/train/corpus.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/step_loop.hpp"
#include "loco/train/strategy.hpp"
#include "loco/train/train_config.hpp"
#include "loco/train/training_checkpoint.hpp"
#include "swarm_peer.hpp"

namespace loco::peer {

// "12.3 MB": the traffic figures of the progress and summary lines.
std::string megabytes(std::uint64_t bytes);

// The parts of a running peer that run_peer builds first and its phases share.
struct PeerParts {
  const PeerOptions& options;
  const train::TrainConfig& config;
  const secure::KeyPair& key;
  const train::Corpus& corpus;
  std::uint32_t context;   // the model's context, in tokens
  fetch::ShardFeed* feed;  // null without a data cache
  train::InnerLoop& loop;
  round::PeerSession& session;  // the strategy and the group its rounds take
  const DebugFaults& faults;
  train::TrainingCheckpoint& checkpoint;
  const std::atomic<bool>& stop;

  round::SwarmGroup& group() const { return session.group(); }
  train::Strategy& strategy() const { return session.strategy(); }
  // Writes the checkpoint, when the peer has a --peer.checkpoint file.
  void save_checkpoint() const;
};

class PeerTraining {
 public:
  using Clock = std::chrono::steady_clock;

  // `shard`: the data shard the join gave.
  PeerTraining(const PeerParts& parts, data::ShardSpec shard);

  // The session's steps (PeerSession::run): while the run has more and `stop` is not set; a
  // round still in flight has landed (and its line is printed) when it returns.
  void run();

  Clock::time_point started() const { return started_; }
  double compute_s() const { return compute_s_; }
  std::uint64_t in_flight_steps() const { return in_flight_steps_; }

 private:
  void computed(const train::StepOutcome& s);
  void done(const train::StepOutcome& s);
  void log_progress(std::uint64_t step);
  void publish_stats();
  void print_landed();

  const PeerParts& p_;
  data::ShardSpec shard_;  // a join again may change it
  // What the heartbeats tell the tracker, renewed every round and progress line: the traffic,
  // the bytes relayed, the figures of the last progress line and, in gossip mode, a sketch of θ
  // (for the spread on its /status and /metrics).
  proto::Heartbeat stats_{};
  train::ProgressInterval interval_;
  double round_loss_ = 0, printed_loss_ = 0;
  std::uint64_t round_steps_ = 0, rounds_seen_ = 0, last_checkpoint_round_ = 0;
  Clock::time_point started_{};
  double compute_s_ = 0;  // inner steps: forward, backward and the local AdamW step
  // Streaming: inner steps that ended with a fragment still on the wire (its mean not in yet),
  // the overlap of communication with compute that the summary line reports.
  std::uint64_t in_flight_steps_ = 0;
};

}  // namespace loco::peer
