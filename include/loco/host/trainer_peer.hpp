#pragma once
// A peer of a run whose inner loop is someone else's (a PyTorch script through the C API,
// loco/loco.h): the trainer owns its model, its inner optimizer and its data; loco owns the rest
// of a DiLoCo peer (train/diloco.hpp over round/swarm_group.hpp): joining, the shared θ and outer
// momentum, the round (Δ, the group's mean, the outer step), the state hash, serving the state
// to newcomers, leaving.
//
// The run's config ([model]) fixes the tensors: their names (nanoGPT's for the GPT; an external
// model's are its genesis file's, train/genesis_file.hpp), shapes and order, which the shared
// state, its hash and the tracker's admission all depend on, so that loco-peer and a trainer peer
// of one run hold the same bits. The trainer binds a buffer of its own to every tensor of that
// layout before join(): same name, same shape, fp32 or bf16, row-major, contiguous. loco reads and
// writes these buffers only inside join() and round(). The shared state stays fp32 whatever the
// buffers: a bf16 buffer is converted as it is read and written, so its Δ carries θ's rounding to
// bf16 too (at most 2^-9 of each weight).
//
// Streaming DiLoCo (the run's [strategy] kind = "streaming"; trainer_streaming.cpp): a round
// covers one fragment of the tensors (train/fragments.hpp, as loco-peer cuts them). The trainer
// follows the run's schedule with fragment_due(step) after each of its inner steps:
// fragment_start() hands Δ of the next fragment's tensors over and returns at once, the trainer
// trains on for τ steps while the group averages it, and fragment_land() lands the round: the
// α-merge of θ_p into the fragment's buffers (loco-peer's train::StreamingDiLoCo, the same code).
// round() on such a peer is a fragment round started and landed at once. With eager updates
// (one fragment over a swarm) a round stays in flight until the next send, where it lands first;
// the merge (of θ, delayed, or of the eager proxy, overlapped) goes into the buffers at the start
// of the next round, as loco-peer's eager_sync does, and round() is refused.
//
// SparseLoCo (the run's [strategy] kind = "sparseloco"; train/sparseloco.hpp): round() takes
// Δ = θ − buffers into this member's error-feedback accumulator e, all-gathers the chunk-wise
// top-k of e with the group and writes the new θ into the buffers, as loco-peer's SparseLoCo does
// every H steps. The buffers get θ whatever the outcome, a skipped round's too: that phase's Δ
// stays in e (and goes out in later rounds), so the next Δ must be measured from θ. e is this
// member's own: save() writes it beside θ ("sparseloco.error"), load() reads it back, and a
// member that joins a run past its state starts with e = 0. Rounds do not overlap.
//
// Call order: open, bind every tensor (and load a checkpoint, if resuming), join, then round as
// often as wanted (and save), leave (or destroy). Everything on one thread, except interrupt(),
// which any thread may call.
//
// Checkpoint of loco's part (save, load): the shared state (θ and the outer momentum, under
// train::DiLoCo's names "outer.params.*" and "outer.momentum.*"; SparseLoCo's θ and this member's
// e) and its round, in loco's training state file (train/train_state_file.hpp: safetensors with a
// digest, the run config's identity). The trainer saves its own model and optimizer; a peer that
// loads a file joins with that state, and the tracker either takes it as the run's (the run is
// still at it) or has it fetch the run's.
//
// Copies per round, for n parameters: the trainer's buffers into θ_local (4n bytes; bf16's
// converted on the way, no copy more) and θ back into them (4n, not on a skipped round), beside
// DiLoCo's own (diloco.hpp, swarm_group.hpp).

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/fetch/shard_feed.hpp"
#include "loco/round/swarm_async_group.hpp"
#include "loco/round/swarm_group.hpp"
#include "loco/secure/identity.hpp"
#include "loco/swarm/swarm_session.hpp"
#include "loco/train/diloco.hpp"
#include "loco/train/sparseloco.hpp"
#include "loco/train/streaming_diloco.hpp"

namespace loco::host {

struct JoinInfo {
  bool fetched = false;  // the run was past its genesis: its state was fetched from members
  std::uint64_t round = 0;
  std::uint32_t shard_index = 0;  // the data shard the tracker gave this peer
  std::uint32_t shard_count = 1;
};

// Where the last round's time went (train::RoundTimes, and the copies around it), in seconds.
struct RoundTimes {
  double gather_s = 0;  // the trainer's buffers copied into θ_local
  train::RoundTimes diloco;
  double write_back_s = 0;  // the new θ copied into the trainer's buffers
};

class TrainerPeer {
 public:
  // Reads the peer config file (loco-peer's keys, host/peer_options.hpp), the run config it
  // names and the key file. Throws Error: config for a bad or missing option, a key the file
  // does not know or a run this peer cannot train (only [strategy] kind = "diloco" without
  // gossip, "streaming" or "sparseloco", and no peer.checkpoint yet); io or format for an
  // unreadable file.
  static std::unique_ptr<TrainerPeer> open(const std::filesystem::path& config_file);
  ~TrainerPeer();
  TrainerPeer(const TrainerPeer&) = delete;
  TrainerPeer& operator=(const TrainerPeer&) = delete;

  // The call order above; failed: join threw (the peer is good for nothing but destruction).
  enum class Phase { open, joined, left, failed };
  Phase phase() const { return phase_; }
  const ArenaLayout& layout() const { return *layout_; }
  std::uint64_t inner_steps() const { return config_.strategy.diloco_h; }  // the run's H
  const std::string& strategy() const { return config_.strategy.kind; }    // [strategy] kind
  // The inner step the shared state's round stands for (round × H; Streaming: the step after
  // which that round landed): a trainer that joined or was replaced goes on from it.
  std::uint64_t state_step() const;

  // The trainer's buffer for tensor `name`. Throws Error(invalid_argument) for a name the run's
  // model does not have, a shape other than the model's (both named), a tensor bound twice, or
  // after join().
  void bind(std::string_view name, std::span<const std::size_t> shape, float* data);
  // The same for a bf16 buffer (the upper halves of fp32s, as PyTorch's torch.bfloat16): read into
  // θ_local exactly, θ written back rounded to nearest even (core/bf16.hpp).
  void bind_bf16(std::string_view name, std::span<const std::size_t> shape, std::uint16_t* data);
  // Joins the run with the state it holds (the genesis, computed from the run's config), fetches
  // the run's state when the run is past it, and writes θ into the trainer's buffers. Throws
  // Error(invalid_argument) when a tensor is not bound, Error(config) when the tracker refuses
  // this peer (its reason), Error(network) when nothing is heard for `patience`. Interrupted:
  // returns nothing.
  std::optional<JoinInfo> join(Duration patience);
  // A run whose data is a dataset the peer fetches (peer.data-cache and the run's data.mirrors,
  // fetch/shard_feed.hpp), after join: the train shards of the data shard the tracker gave it, in
  // order, fetched and checked (waits at most `patience`). The trainer reads its tokens from them
  // (uint16 little-endian, docs/FORMATS.md); the cache's cap never evicts them while the peer
  // lives. Throws Error(config) when the peer fetches no dataset, Error(invalid_argument) before
  // join, Error(network) when they are not in within `patience`, and as the feed (no source gave
  // the first one, the cap, the disk). Interrupted: returns nothing.
  std::optional<std::vector<std::filesystem::path>> data_files(Duration patience);
  // The data shard the tracker gives this peer now, after join. join() gave the first; a join
  // again (after an eviction or a tracker restart, which the network thread makes on its own, seen
  // as a round waits) may give another. `changes` counts the changes since join. A peer that
  // fetches its dataset starts on a new shard's train shards at the call that sees it, while the
  // trainer goes on with the old ones; data_files() gives the new paths once they are in.
  struct DataShard {
    std::uint32_t index = 0;
    std::uint32_t count = 1;
    std::uint64_t changes = 0;
  };
  DataShard data_shard();
  // Writes loco's part (above) to `path` atomically. After join. Throws Error(io).
  void save(const std::filesystem::path& path);
  // Reads what save() wrote, before join: join() then offers that state to the run. Throws
  // Error(io) for a file that cannot be read, Error(format) for a damaged one or one that is not
  // loco's (the file is checked before anything is allocated from its sizes), Error(config) for
  // one of another run config (the differing option named). A failed load changes nothing.
  void load(const std::filesystem::path& path);
  // A DiLoCo round from the trainer's buffers as they are now (`loss`: the mean loss of its
  // inner steps since the last round, for the tracker's status page; NaN if unknown). On
  // committed or replaced, the buffers hold the new θ; skipped leaves them as they were
  // (SparseLoCo: θ, above).
  train::RoundResult round(float loss);
  // Overlapped rounds (before join; round() is then refused): round_start() begins a round from
  // the buffers and returns once the group's mean is in, the buffers holding the θ' it leads to
  // (false: the round ended without a mean; round_land() says how), and the trainer trains on
  // while the network thread hashes θ' ‖ v' and the group commits. round_land() waits for the
  // outcome and lands it: committed leaves the buffers alone (they went on from θ', which the
  // commit installed, unless a retry averaged another mean: the next Δ carries the difference),
  // replaced writes the run's θ into them, skipped leaves θ where it was (the next Δ carries the
  // outer step again). landable(): round_land() would not wait. One round at a time.
  void overlap();
  bool round_start(float loss);
  bool landable() const { return diloco_ && diloco_->outcome_in(); }
  train::RoundResult round_land();
  bool overlapped() const { return overlapped_; }
  bool round_pending() const { return diloco_ && (diloco_->pending() || ended_early_); }

  // Streaming DiLoCo (above). On a peer of another strategy fragment_pending() and
  // fragment_ready() are false, and the others but streaming() throw Error(invalid_argument).
  const train::StreamingDiLoCo* streaming() const { return streaming_ ? &*streaming_ : nullptr; }
  // Fragment p's tensors (indices into layout()), in layout order; p < the run's fragments.
  const std::vector<std::size_t>& fragment_tensors(std::size_t p) const;
  std::size_t fragment_of(std::size_t tensor) const;
  // The fragment the next round covers (the started one's while one is started).
  std::size_t next_fragment() const;
  // What the trainer does after its inner step `step` (the run's count: from state_step() on).
  enum class Due { nothing, start, land };
  Due fragment_due(std::uint64_t step) const;
  // Δ of the next fragment from its tensors' buffers, its round started; returns the fragment.
  // `step`: the trainer's step, from which the round lands τ steps later (fragment_due).
  std::size_t fragment_start(std::uint64_t step, float loss);
  bool fragment_pending() const { return streaming_ && streaming_->fragment_started(); }
  bool fragment_ready() const { return fragment_pending() && async_->outcome_in(); }
  // Waits for the started round and lands it: committed, the fragment's buffers get the α-merge
  // of θ_p into them as they are now; replaced, every buffer gets the run's θ; skipped, nothing.
  train::RoundResult fragment_land();
  // The shared state's hash as of the last round (or join): what every member holds.
  const Digest& state_hash() const { return hash_; }
  std::uint64_t state_round() const { return group_.shared().round(); }
  const RoundTimes& last_times() const { return times_; }
  // Bytes this peer sent and received on its links (tracker, peers) since it joined.
  const round::TrafficCounters& traffic() const { return group_.traffic(); }
  // Tells the tracker and stops the network thread. Further rounds are refused.
  void leave(const std::string& reason);
  // The blocking call in progress (join, round) returns soon: join with nothing, a round with
  // skipped (or the outcome the group had already decided); later ones return so at once,
  // without a word to the run. Any thread; async-signal-safe.
  void interrupt() { stop_.store(true); }

 private:
  TrainerPeer(train::TrainConfig config, std::unique_ptr<fetch::ShardFeed> feed,
              const secure::KeyPair& key, swarm::SwarmConfig swarm, train::SharedState genesis);
  // A trainer's buffer: fp32 or bf16.
  struct Buffer {
    void* data = nullptr;  // null: not bound
    bool bf16 = false;
  };
  void bind_buffer(std::string_view name, std::span<const std::size_t> shape, Buffer buffer);
  void gather(std::size_t first = 0, std::size_t end = SIZE_MAX);  // buffers into θ_local
  void write_back(std::size_t first = 0, std::size_t end = SIZE_MAX);
  void check_streaming(const char* function) const;
  train::SharedState& shared();
  train::RoundResult sync_fragment_round(float loss);  // round() of a streaming peer
  train::RoundResult sparseloco_round(float loss);     // round() of a SparseLoCo peer
  bool eager() const;                                  // a Streaming run with eager updates
  static std::vector<std::vector<std::size_t>> tensors_by_fragment(
      const std::vector<train::Fragment>& fragments);

  train::TrainConfig config_;
  std::unique_ptr<fetch::ShardFeed> feed_;  // when the peer fetches its dataset
  data::ShardSpec shard_;                   // the tracker's, at join and as data_shard() saw it
  std::uint64_t shard_changes_ = 0;         // since join
  std::optional<data::ShardSpec> whole_;    // the shard whose files data_files() gave
  secure::KeyPair key_;
  std::atomic<bool> stop_{false};
  std::shared_ptr<const ArenaLayout> layout_;
  round::SwarmGroup group_;
  // One of the three strategies, by the run's [strategy] kind.
  std::optional<train::DiLoCo> diloco_;
  std::optional<train::SparseLoCo> sparseloco_;
  std::optional<round::SwarmAsyncGroup> async_;  // Streaming's rounds over group_
  std::optional<train::StreamingDiLoCo> streaming_;
  std::vector<std::vector<std::size_t>> fragment_tensors_;  // Streaming: by fragment
  std::uint64_t fragment_started_at_ = 0;  // the step of the last fragment_start (0: none yet)
  Arena local_;                  // θ_local: the trainer's buffers, gathered for the round
  std::vector<Buffer> buffers_;  // the trainer's, by tensor index
  Digest hash_{};
  RoundTimes times_;
  bool overlapped_ = false;
  std::optional<train::RoundResult> ended_early_;  // a started round that had no mean
  // Set by load(): the genesis' manifest (the tracker knows the run by it) before the state was
  // replaced by the file's.
  std::optional<proto::StateManifest> genesis_;
  Phase phase_ = Phase::open;
};

}  // namespace loco::host
