#include "loco/cli/train_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "loco/cli/app.hpp"
#include "loco/core/error.hpp"
#include "loco/train/strategy_kinds.hpp"
#include "loco/train/train_config.hpp"

namespace loco::cli {

using train::TrainConfig;

void add_train_options(CLI::App& app, TrainConfig& c) {
  auto add = [&](const char* name, auto& field, const char* help) {
    app.add_option(name, field, help)->capture_default_str();
  };
  auto add_path = [&](const char* name, std::string& field, const char* help) {
    cli::add_path_option(app, name, field, help)->capture_default_str();
  };
  add("--model.kind", c.model.kind,
      "gpt, mlp (a bigram MLP for quick experiments), or external (the trainers' own model, "
      "described by its genesis file; trainer peers only)");
  add_path("--model.genesis", c.model.genesis,
           "external model: its genesis file (safetensors: tensor names, shapes, initial values)");
  add("--model.genesis-blake2b", c.model.genesis_blake2b,
      "external model: the genesis file's BLAKE2b-256 (64 hex digits), checked by every reader");
  add("--model.vocab", c.model.gpt.vocab, "vocabulary size (tokens 0..vocab-1)");
  add("--model.context", c.model.gpt.context, "sequence length");
  add("--model.n-layer", c.model.gpt.n_layer, "transformer blocks");
  add("--model.n-head", c.model.gpt.n_head, "attention heads (d-model must be a multiple)");
  add("--model.d-model", c.model.gpt.d_model, "width of the residual stream");
  add("--model.mlp-embed", c.model.mlp_embed, "MLP model: embedding width");
  add("--model.mlp-hidden", c.model.mlp_hidden, "MLP model: hidden width");

  add("--data.source", c.data.source,
      "markov (synthetic, known entropy floor), files (two token files) or dataset (a manifest)");
  add("--data.markov-order", c.data.markov.order, "Markov source: tokens of context");
  add("--data.markov-successors", c.data.markov.successors,
      "Markov source: likely next tokens per state");
  add("--data.markov-uniform-mix", c.data.markov.uniform_mix,
      "Markov source: probability of a uniformly random next token");
  add("--data.markov-seed", c.data.markov.seed, "Markov source: seed of the transition table");
  add("--data.markov-train-tokens", c.data.markov_train_tokens, "Markov source: training tokens");
  add("--data.markov-val-tokens", c.data.markov_val_tokens, "Markov source: validation tokens");
  add_path("--data.train-file", c.data.train_file, "training token file (source = files)");
  add_path("--data.val-file", c.data.val_file, "validation token file (source = files)");
  add_path("--data.manifest", c.data.manifest,
           "the dataset's manifest.txt or its folder (source = dataset; loco-prepare --out-dir)");
  add("--data.manifest-hash", c.data.manifest_hash,
      "the manifest's BLAKE2b-256 (64 hex digits; source = dataset): every shard is checked "
      "against it");
  add("--data.mirrors", c.data.mirrors,
      "source = dataset: http:// URLs of folders serving the dataset's files, tried in order by "
      "peers with --peer.data-cache");
  add("--data.shard-index", c.data.shard.index, "this process's shard of the training tokens");
  add("--data.shard-count", c.data.shard.count, "number of shards");

  add("--optim.beta1", c.adamw.beta1, "AdamW β1");
  add("--optim.beta2", c.adamw.beta2, "AdamW β2");
  add("--optim.eps", c.adamw.eps, "AdamW ε");
  add("--optim.weight-decay", c.adamw.weight_decay, "decoupled weight decay (matrices only)");
  add("--optim.grad-clip", c.adamw.grad_clip, "global gradient-norm clip (0 = off)");
  add("--optim.lr", c.lr.max_lr, "peak learning rate (after warmup)");
  add("--optim.min-lr", c.lr.min_lr, "learning rate at the end of the cosine decay");
  add("--optim.warmup-steps", c.lr.warmup_steps, "steps of linear warmup");

  add("--train.steps", c.train.steps, "total optimizer steps (the schedule's length)");
  add("--train.stop-at", c.train.stop_at, "stop and checkpoint after this step (0 = at the end)");
  add("--train.batch", c.train.batch, "sequences per step");
  add("--train.seed", c.train.seed, "seed of the initial parameters and the data order");
  add("--train.threads", c.train.threads, "compute threads (results are bit-exact per count)");
  add("--train.log-every", c.train.log_every, "steps between progress lines");
  add("--train.eval-every", c.train.eval_every, "steps between validation losses (0 = at end)");
  add("--train.eval-windows", c.train.eval_windows,
      "validation windows per validation loss (the same ones whatever the batch)");
  add("--train.checkpoint-every", c.train.checkpoint_every,
      "steps between checkpoints (0 = only at exit)");
  add_path("--train.checkpoint", c.train.checkpoint, "checkpoint file to write (empty = none)");
  add_path("--train.resume", c.train.resume, "checkpoint to resume from (bit-exact)");
  cli::add_path_option(app, "--resume", c.train.resume, "same as --train.resume");
  add_path("--train.init", c.train.init, "initial parameters, nanoGPT names (empty = from seed)");
  cli::add_path_option(app, "--init", c.train.init, "same as --train.init");

  const std::string kinds = train::strategy_names(nullptr, '\0') + " (none: local AdamW only)";
  add("--strategy.kind", c.strategy.kind, kinds.c_str());
  add("--strategy.diloco-h", c.strategy.diloco_h, "DiLoCo: inner steps per round (H)");
  add("--strategy.outer-lr", c.strategy.outer.lr, "DiLoCo: outer Nesterov learning rate (η)");
  add("--strategy.outer-momentum", c.strategy.outer.momentum,
      "DiLoCo: outer Nesterov momentum (μ)");
  add("--strategy.codec", c.strategy.codec,
      "how updates travel between peers, e.g. int8:block=256, fp4:block=64, fp32 (default: "
      "int8:block=256 for diloco, fp32 for ddp)");
  add("--strategy.all-reduce", c.strategy.all_reduce,
      "how a group averages over the network: direct (2 latencies, every member to every other) "
      "or ring (2(N-1) latencies, one neighbour each way)");
  add("--strategy.gossip-group", c.strategy.gossip_group,
      "DiLoCo over a swarm: 0 = one group of all members per round; 2..8 = gossip in groups of g");
  add("--strategy.round-seconds", c.strategy.round_seconds,
      "DiLoCo over a swarm: > 0 = each round's inner phase lasts this long and the mean weighs "
      "each member's update by its tokens; 0 = a round every diloco-h steps");
  add("--strategy.tracker-paced", c.strategy.tracker_paced,
      "DiLoCo over a swarm: rounds bounded by time whose inner phase the tracker sets to diloco-h "
      "x the median member's step time (round-seconds, if > 0, is the first phase); unset: true "
      "in all-reduce mode unless round-seconds > 0");
  // Streaming DiLoCo (kind = streaming; H is diloco-h).
  add("--strategy.fragments", c.strategy.fragments, "Streaming: fragments of whole layers (P)");
  add("--strategy.tau", c.strategy.tau, "Streaming: steps a fragment travels (τ < H/P)");
  add("--strategy.alpha", c.strategy.alpha, "Streaming: α-merge weight of the local copy");
  add("--strategy.layout", c.strategy.layout,
      "Streaming: sequential or strided layers (loco's models), or balanced: runs of whole "
      "tensors balanced by size (any model; an external one's)");
  add("--strategy.eager", c.strategy.eager, "Streaming: none, overlapped or delayed");
  add("--strategy.fragment-codec", c.strategy.fragment_codec,
      "Streaming: how a fragment's Δ travels (default fp4 E3M0)");
  // DeMo (kind = demo).
  add("--strategy.demo-chunk", c.strategy.demo_chunk, "DeMo: DCT chunk size per dimension");
  add("--strategy.demo-topk", c.strategy.demo_topk, "DeMo: DCT coefficients kept per chunk");
  add("--strategy.demo-beta", c.strategy.demo_beta, "DeMo: momentum decay β");
  add("--strategy.demo-values", c.strategy.demo_values,
      "DeMo: how kept values travel: sign (1 bit + a scale per chunk), fp32, fp16, int8, ...");
  // SparseLoCo (kind = sparseloco; H is diloco-h).
  add("--strategy.sparseloco-beta", c.strategy.sparseloco_beta,
      "SparseLoCo: error-feedback decay β (e ← βe + Δ)");
  add("--strategy.sparseloco-chunk", c.strategy.sparseloco_chunk,
      "SparseLoCo: values per chunk of the top-k (≤ 65536)");
  add("--strategy.sparseloco-topk", c.strategy.sparseloco_topk, "SparseLoCo: kept per chunk");
  add("--strategy.sparseloco-bits", c.strategy.sparseloco_bits,
      "SparseLoCo: bits of a kept value: 2, 4 or 8 (a scale per chunk)");
  add("--strategy.sparseloco-outer-lr", c.strategy.sparseloco_outer_lr,
      "SparseLoCo: θ moves by outer-lr × the members' mean update");
  add("--strategy.sparseloco-clip", c.strategy.sparseloco_clip,
      "SparseLoCo: each member's update clipped to clip × the median norm (0: off)");
  add("--strategy.sparseloco-zstd", c.strategy.sparseloco_zstd,
      "SparseLoCo: zstd level (1-19) of each tensor's message, lossless (0: none)");
  add("--strategy.demo-late", c.strategy.demo_late,
      "DeMo: apply each step's direction one step later (over the swarm, each step's round then "
      "runs while the next step computes)");
}

TrainConfig load_train_config(const std::filesystem::path& path) {
  CLI::App app;
  CommonOptions common;
  add_common_options(app, common);
  TrainConfig config;
  add_train_options(app, config);
  const std::string file = path.string();
  const char* argv[] = {"loco", "--config", file.c_str()};
  try {
    app.parse(3, argv);
  } catch (const CLI::ParseError& e) {
    throw Error(ErrorCategory::config, fmt::format("run config {}: {}", file, e.what()));
  }
  try {
    config.validate();
  } catch (const Error& e) {
    throw Error(ErrorCategory::config, fmt::format("run config {}: {}", file, e.message()));
  }
  return config;
}

}  // namespace loco::cli
