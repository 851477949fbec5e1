#pragma once
// Everything one local training run needs. Each field is an option of loco-train (flag
// --section.key, TOML key `key` under `[section]`; see cli/train_options.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loco/data/markov_source.hpp"
#include "loco/data/sampler_cursor.hpp"
#include "loco/model/gpt.hpp"
#include "loco/model/mlp.hpp"
#include "loco/optim/adamw.hpp"
#include "loco/optim/outer_nesterov.hpp"
#include "loco/optim/schedule.hpp"
#include "loco/train/strategy_kinds.hpp"

namespace loco::train {

// kind "gpt" or "mlp" (the bigram MLP for quick experiments): loco's own models, which loco-train
// and loco-peer train. kind "external": the model is whatever the trainers bring (a trainer peer:
// the C API or the Python package); its tensors and initial values come from the genesis file
// (genesis_file.hpp), named by its BLAKE2b-256, which every reader checks.
struct ModelSection {
  std::string kind = "gpt";
  model::GptConfig gpt;  // vocab and context are shared with the MLP
  std::size_t mlp_embed = 64;
  std::size_t mlp_hidden = 256;
  std::string genesis;          // kind "external": the genesis file
  std::string genesis_blake2b;  // its BLAKE2b-256, 64 lowercase hex digits
  bool external() const { return kind == "external"; }
};

struct DataSection {
  // "markov" (synthetic, entropy floor known), "files" (two token files) or "dataset" (a
  // manifest of checked shards, data/dataset_manifest.hpp)
  std::string source = "markov";
  data::MarkovConfig markov;  // vocab_size is taken from the model
  std::uint64_t markov_train_tokens = 1'000'000;
  std::uint64_t markov_val_tokens = 100'000;
  std::string train_file;  // token files (docs/FORMATS.md) when source = "files"
  std::string val_file;
  std::string manifest;       // source = "dataset": the manifest file, or its folder (loco-prepare)
  std::string manifest_hash;  // its BLAKE2b-256, 64 lowercase hex digits: names the dataset
  // Base URLs a peer fetches the dataset from, in order (loco/fetch/dataset_fetch.hpp); not part
  // of the run's settings: every byte is checked against manifest_hash wherever it comes from.
  std::vector<std::string> mirrors;
  data::ShardSpec shard;  // this process reads only this shard of the training tokens
};

struct TrainSection {
  std::uint64_t steps = 1000;  // total optimizer steps (the schedule ends here)
  std::uint64_t stop_at = 0;   // stop (and checkpoint) after this step; 0 = run to `steps`
  std::uint32_t batch = 16;
  std::uint64_t seed = 1;  // parameters and data order
  int threads = 2;
  std::uint64_t log_every = 10;
  std::uint64_t eval_every =
      100;  // validation loss every N steps and at the end; 0 = only at the end
  // Validation windows a validation loss averages, the same ones whatever the batch: runs of
  // different batch sizes (a swarm's peers, one process) are judged on the same data.
  std::uint32_t eval_windows = 128;
  std::uint64_t checkpoint_every = 0;  // 0 = only at exit
  std::string checkpoint;              // file to write; empty = no checkpoints
  std::string resume;                  // checkpoint to continue from; empty = start fresh
  std::string init;  // safetensors file of initial parameters (init_params.hpp); empty = seed
};

// What the inner loop takes part in (strategy.hpp). `kind` names a row of strategy_kinds.hpp:
// none, plain local training; diloco, a DiLoCo round every `diloco_h` steps; ddp, gradients
// averaged every step (alone in loco-train, with the run's group in loco-peer); streaming,
// Streaming DiLoCo over `fragments` fragments (streaming_diloco.hpp), H = diloco_h; demo, DeMo
// (demo.hpp), a gather of DCT components every step; sparseloco, SparseLoCo (sparseloco.hpp), a
// gather of each member's sparse update every diloco_h steps.
struct StrategySection {
  std::string kind{strategy_name(StrategyKind::none)};
  std::uint64_t diloco_h = 20;
  optim::OuterNesterovConfig outer;
  std::string codec;  // how updates travel between peers (compress/spec.hpp); empty: the default
  std::string all_reduce = "direct";  // or "ring" (proto/all_reduce.hpp)
  // DiLoCo over a swarm: 0, every round one group of all members (all-reduce mode); g in 2..8,
  // gossip mode (docs/DESIGN.md §1.6): each round groups of g average θ, v and Δ among themselves.
  std::size_t gossip_group = 0;
  // DiLoCo over a swarm: > 0, rounds bounded by time (docs/STRATEGIES.md, "Rounds bounded by
  // time"): each inner phase lasts this many seconds (at least one step) and the group's mean
  // weighs each member's Δ by its tokens; diloco-h is then a round's nominal steps (the run's
  // rounds are train.steps / diloco-h). 0: a round every diloco-h steps, the plain mean.
  double round_seconds = 0;
  // DiLoCo over a swarm, all-reduce mode: rounds bounded by time whose phase the tracker sets,
  // diloco-h × the median member's measured step time (proto/round_pace.hpp); round_seconds,
  // if > 0, is the first phase (else each member's first phase is diloco-h of its own steps).
  // Unset: a swarm's run config (apply_swarm_defaults, swarm_strategy.hpp) paces DiLoCo's
  // all-reduce rounds unless round_seconds fixes them; anywhere else, not paced.
  std::optional<bool> tracker_paced;
  bool paced() const { return tracker_paced.value_or(false); }
  // Rounds bounded by time, fixed or paced by the tracker.
  bool timed_rounds() const { return round_seconds > 0 || paced(); }

  // Whether the inner loop steps with AdamW: every strategy but DeMo, which steps θ itself (the
  // sign of the members' mean) and keeps its own momentum; under DeMo no AdamW moment is allocated.
  bool steps_with_adamw() const;
  // The codec in effect: `codec`, or the strategy's default (DiLoCo int8:block=256, DDP fp32,
  // DeMo its DCT top-k codec from the demo options, SparseLoCo its chunk top-k codec).
  std::string codec_spec() const;
  // Streaming DiLoCo (docs/DESIGN.md §1.2-1.3).
  std::size_t fragments = 2;                    // P
  std::uint64_t tau = 0;                        // τ < H/P
  float alpha = 0.5f;                           // α-merge weight of the local copy
  std::string layout = "sequential";            // or "strided"
  std::string eager = "none";                   // or "overlapped", "delayed"
  std::string fragment_codec = "fp4:block=64";  // how a fragment's Δ travels (E3M0)
  // DeMo (docs/DESIGN.md §1.4, demo_components.hpp).
  std::size_t demo_chunk = 64;       // chunk size per dimension (largest divisor ≤ it)
  std::size_t demo_topk = 32;        // DCT coefficients kept per chunk
  float demo_beta = 0.999f;          // momentum decay β
  std::string demo_values = "sign";  // how kept values travel: sign, fp32, fp16, int8, ...
  bool demo_late = false;            // apply each step's direction one step later
  // SparseLoCo (docs/STRATEGIES.md, sparseloco_components.hpp); H is diloco_h.
  float sparseloco_beta = 0.95f;        // error-feedback decay β
  std::size_t sparseloco_chunk = 4096;  // values per chunk of the top-k (≤ 65536)
  std::size_t sparseloco_topk = 64;     // kept per chunk
  unsigned sparseloco_bits = 2;         // bits of a kept value: 2, 4 or 8
  float sparseloco_outer_lr = 1.0f;     // θ ← θ − outer_lr × the members' clipped mean
  float sparseloco_clip = 1.0f;         // a member's update ≤ clip × the median norm; 0: off
  unsigned sparseloco_zstd = 0;         // zstd level (1–19) of each tensor's message; 0: none
};

struct TrainConfig {
  ModelSection model;
  DataSection data;
  optim::AdamWConfig adamw;
  optim::LrSchedule lr;  // total_steps is train.steps
  TrainSection train;
  StrategySection strategy;

  // Throws Error(config) naming the first inconsistent option.
  void validate() const;
  // The options that fix the parameter layout and the data stream, as "key=value" lines: a
  // checkpoint records it with the data's content (corpus.hpp, checkpoint_identity), and resuming
  // under a different one is refused.
  std::string identity() const;
};

}  // namespace loco::train
