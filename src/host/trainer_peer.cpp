#include "loco/host/trainer_peer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "loco/cli/app.hpp"
#include "loco/core/bf16.hpp"
#include "loco/core/error.hpp"
#include "loco/core/log.hpp"
#include "loco/host/peer_options.hpp"
#include "loco/host/peer_shards.hpp"
#include "loco/model/model.hpp"
#include "loco/net/units.hpp"
#include "loco/swarm/swarm_thread.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/make_sparseloco.hpp"
#include "loco/train/make_streaming.hpp"
#include "loco/train/strategy_kinds.hpp"
#include "loco/train/train_state_file.hpp"

namespace loco::host {
namespace {

Error refused(const std::string& what) {
  return Error(ErrorCategory::config, what);
}

// loco-peer's options from `file`, strictly (a key no option has is an error), as loco-peer
// reads them; CLI11's messages carry the file and line.
PeerOptions read_options(const std::filesystem::path& file, cli::CommonOptions& common) {
  if (!std::filesystem::is_regular_file(file))
    throw refused(fmt::format("peer config {}: no such file", file.string()));
  CLI::App app;
  cli::add_common_options(app, common);
  PeerOptions options;
  add_peer_options(app, options);
  std::vector<std::string> args = {file.string(), "--config"};  // CLI11 reads them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw refused(fmt::format("peer config {}: {}", file.string(), e.what()));
  }
  return options;
}

// What a trainer peer does not do (yet), refused rather than ignored.
void check_supported(const PeerOptions& o, const train::TrainConfig& config) {
  if (!train::strategy_row(config.strategy.kind).trainer_peer)
    throw refused(
        fmt::format("run config {}: a trainer peer runs [strategy] kind = {} rounds, "
                    "not \"{}\"",
                    o.run_config, train::strategy_names(&train::StrategyRow::trainer_peer, '"'),
                    config.strategy.kind));
  if (config.strategy.gossip_group != 0)
    throw refused(
        fmt::format("run config {}: a trainer peer does not run gossip rounds "
                    "(strategy.gossip-group = {}): all-reduce rounds only",
                    o.run_config, config.strategy.gossip_group));
  if (config.strategy.timed_rounds())
    throw refused(fmt::format(
        "run config {}: a trainer peer's rounds come when its trainer calls them, not "
        "bounded by time (strategy.round-seconds = {}, tracker-paced = {}; a DiLoCo run is paced "
        "unless its run config says strategy.tracker-paced = false)",
        o.run_config, config.strategy.round_seconds, config.strategy.paced()));
  if (!o.checkpoint.empty())
    throw refused(
        "peer.checkpoint: a trainer peer saves and loads loco's part when its trainer calls for "
        "it (loco_peer_save, loco_peer_load; in Python peer.save, peer.load), beside the "
        "trainer's own checkpoint");
  if (net::parse_duration(o.seed_after_end, "peer.seed-after-end", std::chrono::hours(24 * 30)) >
      Duration::zero())
    throw refused(
        "peer.seed-after-end: a trainer peer leaves when its trainer closes it; to serve the run's "
        "final model to others, run `loco-peer --peer.seed-after-end ...` with the run's peer "
        "config (it fetches the final state and serves it)");
}

// The shared state's arenas under their checkpoint prefixes (outer.params, outer.momentum), and
// SparseLoCo's e when `error` is not null (this member's own, train::SparseLoCo::kError).
std::vector<train::NamedArena> named(train::SharedState& state, Arena* error) {
  std::vector<train::NamedArena> arenas;
  for (train::SharedState::Part& part : state.parts()) arenas.push_back({part.name, &part.arena});
  if (error != nullptr) arenas.push_back({train::SparseLoCo::kError, error});
  return arenas;
}

std::string shape_text(std::span<const std::size_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace

std::unique_ptr<TrainerPeer> TrainerPeer::open(const std::filesystem::path& config_file) {
  cli::CommonOptions common;
  const PeerOptions options = read_options(config_file, common);
  init_logging(common.log_level, common.log_format);
  train::TrainConfig config = load_run_config(options);
  check_supported(options, config);
  // From the run's mirrors, when it has a data cache: the manifest, tokenizer and validation
  // shards now, the data shard's train shards once the tracker gave it (data_files()).
  std::unique_ptr<fetch::ShardFeed> feed = start_data_feed(options, config);
  if (options.key_file.empty())
    throw refused(
        "peer.key: this peer's identity key file; make one with `loco-peer keygen "
        "--out peer.key`");
  if (options.threads > 0) model::set_compute_threads(options.threads);
  const secure::KeyPair key = secure::read_key_file(options.key_file, secure::KeyOwner::peer);
  swarm::SwarmConfig swarm = swarm_config(options, config);
  // The genesis (train/genesis.hpp): the run's initial parameters, zero momentum, round 0.
  train::SharedState genesis = train::genesis_state(config);
  return std::unique_ptr<TrainerPeer>(new TrainerPeer(std::move(config), std::move(feed), key,
                                                      std::move(swarm), std::move(genesis)));
}

TrainerPeer::TrainerPeer(train::TrainConfig config, std::unique_ptr<fetch::ShardFeed> feed,
                         const secure::KeyPair& key, swarm::SwarmConfig swarm,
                         train::SharedState genesis)
    : config_(std::move(config)),
      feed_(std::move(feed)),
      key_(key),
      layout_(genesis.arena(0).shared_layout()),
      // Its dataset shared with the run's other peers, theirs asked first (host/peer_shards.hpp).
      group_(sharing_thread(std::move(swarm), key_, feed_.get()), &stop_),
      local_(layout_),
      buffers_(layout_->tensor_count()) {
  const train::StrategyKind kind = train::strategy_row(config_.strategy.kind).kind;
  if (kind == train::StrategyKind::streaming) {
    async_.emplace(group_);
    streaming_.emplace(train::streaming_config(config_.strategy), layout_, *async_);
    fragment_tensors_ = tensors_by_fragment(streaming_->fragments());
  } else if (kind == train::StrategyKind::sparseloco) {
    sparseloco_.emplace(train::sparseloco_config(config_.strategy), layout_, group_);
  } else {
    diloco_.emplace(train::DiLoCoConfig{.inner_steps = config_.strategy.diloco_h,
                                        .outer = config_.strategy.outer},
                    layout_, group_);
  }
  shared() = std::move(genesis);
  group_.bind(shared());
}

train::SharedState& TrainerPeer::shared() {
  if (diloco_) return diloco_->shared();
  if (sparseloco_) return sparseloco_->shared();
  return streaming_->shared();
}

TrainerPeer::~TrainerPeer() {
  // The network thread reads the strategy's state (it serves it, and computes a started round's
  // tentative state from it): it stops here, before the strategy, declared after group_, goes.
  group_.leave("closed");
}

void TrainerPeer::bind(std::string_view name, std::span<const std::size_t> shape, float* data) {
  bind_buffer(name, shape, Buffer{.data = data, .bf16 = false});
}

void TrainerPeer::bind_bf16(std::string_view name, std::span<const std::size_t> shape,
                            std::uint16_t* data) {
  bind_buffer(name, shape, Buffer{.data = data, .bf16 = true});
}

void TrainerPeer::bind_buffer(std::string_view name, std::span<const std::size_t> shape,
                              Buffer buffer) {
  if (phase_ != Phase::open)
    throw Error(ErrorCategory::invalid_argument,
                fmt::format("tensor {}: tensors are bound before join", name));
  const auto index = layout_->find(name);
  if (!index)
    throw Error(ErrorCategory::invalid_argument,
                fmt::format("tensor {}: the run's model has no tensor of that name (its first is "
                            "{}; loco_peer_tensor_info lists them)",
                            name, layout_->tensor(0).name));
  const TensorInfo& info = layout_->tensor(*index);
  if (!std::ranges::equal(shape, info.shape))
    throw Error(ErrorCategory::invalid_argument,
                fmt::format("tensor {}: shape {} given, the run's model has {}", name,
                            shape_text(shape), shape_text(info.shape)));
  if (buffer.data == nullptr)
    throw Error(ErrorCategory::invalid_argument, fmt::format("tensor {}: no buffer", name));
  if (buffers_[*index].data != nullptr)
    throw Error(ErrorCategory::invalid_argument, fmt::format("tensor {}: bound twice", name));
  buffers_[*index] = buffer;
}

std::optional<JoinInfo> TrainerPeer::join(Duration patience) {
  if (phase_ != Phase::open)
    throw Error(ErrorCategory::invalid_argument,
                phase_ == Phase::failed ? "join: a join of this peer failed; open a new one"
                                        : "join: this peer has joined already");
  const auto unbound = [](const Buffer& b) { return b.data == nullptr; };
  const auto missing = std::ranges::find_if(buffers_, unbound);
  if (missing != buffers_.end()) {
    const TensorInfo& info = layout_->tensor(static_cast<std::size_t>(missing - buffers_.begin()));
    throw Error(ErrorCategory::invalid_argument,
                fmt::format("join: tensor {} {} is not bound ({} of the model's {} are)", info.name,
                            shape_text(info.shape),
                            buffers_.size() -
                                static_cast<std::size_t>(std::ranges::count_if(buffers_, unbound)),
                            buffers_.size()));
  }
  if (stop_.load()) return std::nullopt;  // interrupted before: the session is not started twice
  const bool resumed = genesis_.has_value();
  const proto::StateManifest genesis = resumed ? *genesis_ : shared().manifest();
  round::JoinOutcome outcome;
  try {
    outcome = group_.join(genesis, /*at_genesis=*/!resumed, patience);
  } catch (const Error&) {
    // Its session started: a second join would start it again. The error says why, by its
    // category: the tracker's refusal or another run (config), not the pinned key (crypto),
    // nothing to connect to or no answer (network); SwarmGroup::join.
    phase_ = Phase::failed;
    throw;
  }
  if (outcome.stopped) return std::nullopt;
  hash_ = outcome.fetched || resumed ? shared().hash() : genesis.state_hash();
  phase_ = Phase::joined;
  if (streaming_) {
    streaming_->start_from_shared(local_);  // θ, and eager's anchor
  } else {
    local_.copy_from(shared().arena(0));
  }
  // The run went on without this member's e (a loaded one is of an older state): it starts
  // again from 0, as loco-peer's SparseLoCo does when it joins.
  if (sparseloco_ && outcome.fetched) sparseloco_->forget_error();
  write_back();
  shard_ = {outcome.reply.shard_index, outcome.reply.shard_count};
  spdlog::info("joined the run: shard {} of {}, round {}, {} parameters", outcome.reply.shard_index,
               outcome.reply.shard_count, state_round(), layout_->parameter_count());
  return JoinInfo{.fetched = outcome.fetched,
                  .round = state_round(),
                  .shard_index = outcome.reply.shard_index,
                  .shard_count = outcome.reply.shard_count};
}

std::optional<std::vector<std::filesystem::path>> TrainerPeer::data_files(Duration patience) {
  if (!feed_)
    throw Error(ErrorCategory::config,
                "data_files: this peer fetches no dataset (the run's [data] source is not "
                "\"dataset\" with mirrors, or peer.data-cache is not set)");
  if (phase_ != Phase::joined)
    throw Error(ErrorCategory::invalid_argument, "data_files: after join only");
  data_shard();  // a shard given since: its files
  feed_->assign(shard_);
  const auto deadline = std::chrono::steady_clock::now() + patience;
  // The feed offers a shard's tokens once, as they come: asked again, the files are in already.
  while (whole_ != shard_) {
    const std::optional<fetch::ShardFeed::Held> held = feed_->wait(stop_, deadline);
    if (held && held->whole && held->shard == shard_) {
      whole_ = shard_;
      break;
    }
    if (stop_.load()) return std::nullopt;
    if (std::chrono::steady_clock::now() >= deadline)
      throw Error(
          ErrorCategory::network,
          fmt::format("data_files: data shard {} of {} was not fetched within {:.0f} s{}",
                      shard_.index, shard_.count, std::chrono::duration<double>(patience).count(),
                      feed_->stalled() ? " (" + *feed_->stalled() + ")" : ""));
  }
  const data::ShardSpan span = data::train_shards_of(feed_->manifest(), shard_);
  std::vector<std::filesystem::path> files;
  for (std::size_t k = span.first; k < span.end; ++k)
    files.push_back(feed_->folder() / feed_->manifest().train[k].name);
  return files;
}

TrainerPeer::DataShard TrainerPeer::data_shard() {
  if (phase_ != Phase::joined)
    throw Error(ErrorCategory::invalid_argument, "data_shard: after join only");
  const proto::JoinReply& latest = group_.last_join();
  const data::ShardSpec now{latest.shard_index, latest.shard_count};
  if (now != shard_) {
    spdlog::info(
        "the tracker gave this peer data shard {} of {} (it held {} of {}) as it joined "
        "again{}",
        now.index, now.count, shard_.index, shard_.count, feed_ ? ": fetching it" : "");
    shard_ = now;
    ++shard_changes_;
    if (feed_) feed_->assign(shard_);
  }
  return {.index = shard_.index, .count = shard_.count, .changes = shard_changes_};
}

void TrainerPeer::overlap() {
  if (phase_ != Phase::open)
    throw Error(ErrorCategory::invalid_argument, "overlap: before join only");
  if (!diloco_)
    throw Error(ErrorCategory::invalid_argument,
                streaming_ ? "overlap: a Streaming DiLoCo peer overlaps its fragment rounds "
                             "(fragment_start, fragment_land), not whole rounds"
                           : "overlap: a SparseLoCo peer's rounds do not overlap its steps "
                             "(round() only)");
  if (!overlapped_) diloco_->overlap_with(group_);
  overlapped_ = true;
}

bool TrainerPeer::round_start(float loss) {
  if (phase_ != Phase::joined || !overlapped_ || diloco_->pending() || ended_early_)
    throw Error(ErrorCategory::invalid_argument,
                phase_ != Phase::joined ? "round_start: join the run first (and not left)"
                : !overlapped_          ? "round_start: this peer's rounds do not overlap"
                                        : "round_start: land the round in flight first");
  if (stop_.load()) {  // interrupted: no new round goes to the network
    ended_early_ = train::RoundResult{.kind = train::RoundResult::Kind::skipped, .state = hash_};
    return false;
  }
  times_ = {};
  const TimePoint start = steady_now();
  gather();
  times_.gather_s = std::chrono::duration<double>(steady_now() - start).count();
  group_.note_phase_loss(loss);
  const TimePoint exchange = steady_now();
  diloco_->round(local_);  // Δ, the all-reduce until the mean, θ' into local_
  times_.diloco.exchange_s = std::chrono::duration<double>(steady_now() - exchange).count();
  const TimePoint write = steady_now();
  write_back();
  times_.write_back_s = std::chrono::duration<double>(steady_now() - write).count();
  if (!diloco_->pending()) ended_early_ = diloco_->last_round();  // round_land() returns it
  return diloco_->pending();
}

train::RoundResult TrainerPeer::round_land() {
  if (ended_early_) {
    hash_ = ended_early_->state;
    return *std::exchange(ended_early_, std::nullopt);
  }
  if (phase_ != Phase::joined || !diloco_ || !diloco_->pending())
    throw Error(ErrorCategory::invalid_argument, "round_land: no round started");
  const TimePoint start = steady_now();
  const train::RoundResult result = diloco_->land(local_);
  if (result.kind == train::RoundResult::Kind::replaced) write_back();
  times_.diloco.exchange_s += std::chrono::duration<double>(steady_now() - start).count();
  hash_ = result.state;
  return result;
}

train::RoundResult TrainerPeer::round(float loss) {
  if (phase_ != Phase::joined || overlapped_)
    throw Error(ErrorCategory::invalid_argument,
                phase_ == Phase::left ? "round: this peer has left"
                : overlapped_         ? "round: this peer overlaps its rounds (round_start)"
                                      : "round: join the run first");
  // Interrupted: no new round goes to the network (loco.h: later calls return at once).
  if (stop_.load())
    return train::RoundResult{.kind = train::RoundResult::Kind::skipped, .state = hash_};
  if (streaming_) return sync_fragment_round(loss);
  if (sparseloco_) return sparseloco_round(loss);
  times_ = {};
  const auto seconds_since = [](TimePoint start) {
    return std::chrono::duration<double>(steady_now() - start).count();
  };
  const TimePoint gather_start = steady_now();
  gather();
  times_.gather_s = seconds_since(gather_start);
  group_.note_phase_loss(loss);
  const train::RoundResult result = diloco_->round(local_);
  times_.diloco = diloco_->last_times();
  hash_ = result.state;
  if (result.kind != train::RoundResult::Kind::skipped) {
    const TimePoint write_start = steady_now();
    write_back();
    times_.write_back_s = seconds_since(write_start);
  }
  return result;
}

train::RoundResult TrainerPeer::sparseloco_round(float loss) {
  times_ = {};
  const TimePoint gather_start = steady_now();
  gather();
  const TimePoint exchange_start = steady_now();
  times_.gather_s = std::chrono::duration<double>(exchange_start - gather_start).count();
  group_.note_phase_loss(loss);
  const train::RoundResult result = sparseloco_->round(local_);  // local_ holds θ after it
  const TimePoint write_start = steady_now();
  // Δ, the top-k, the all-gather, the mean and its hash: SparseLoCo times no phase of its own.
  times_.diloco.exchange_s = std::chrono::duration<double>(write_start - exchange_start).count();
  hash_ = result.state;
  write_back();  // every outcome (the class comment)
  times_.write_back_s = std::chrono::duration<double>(steady_now() - write_start).count();
  return result;
}

void TrainerPeer::save(const std::filesystem::path& path) {
  if (phase_ != Phase::joined && phase_ != Phase::left)
    throw Error(ErrorCategory::invalid_argument,
                "save: join the run first (the state before it is the genesis or a loaded file)");
  // The identity: the run config's options that fix the layout (another model's file is refused
  // by name on load).
  train::SharedState& state = shared();
  Arena* error = sparseloco_ ? &sparseloco_->error() : nullptr;
  train::save_train_state(
      path, named(state, error),
      train::StateFileValues{.counters = {{"round", state.round()}}, .cursor = ""},
      config_.identity());
}

void TrainerPeer::load(const std::filesystem::path& path) {
  if (phase_ != Phase::open) throw Error(ErrorCategory::invalid_argument, "load: before join only");
  // Into a state of its own first (8 bytes a parameter more, for the call): a file that fails
  // half-way leaves the peer's state as it was.
  std::vector<std::string> names;  // the strategy's arenas (Streaming's eager.mean too)
  for (const train::SharedState::Part& part : shared().parts()) names.push_back(part.name);
  train::SharedState loaded(layout_, names);
  std::optional<Arena> error;  // SparseLoCo's e
  if (sparseloco_) error.emplace(layout_);
  const train::StateFileValues values = train::load_train_state(
      path, named(loaded, error ? &*error : nullptr), {"round"}, config_.identity());
  loaded.set_round(values.counters.at("round"));
  if (!genesis_) genesis_ = shared().manifest();
  shared() = std::move(loaded);
  if (error) sparseloco_->error().copy_from(*error);
  spdlog::info("loaded loco's state of round {} from {}", shared().round(), path.string());
}

void TrainerPeer::leave(const std::string& reason) {
  if (phase_ == Phase::left) return;
  group_.leave(reason);
  phase_ = Phase::left;
}

void TrainerPeer::gather(std::size_t first, std::size_t end) {
  for (std::size_t i = first; i < std::min(end, buffers_.size()); ++i) {
    const std::span<float> tensor = local_.tensor(i);
    if (!buffers_[i].bf16) {
      std::memcpy(tensor.data(), buffers_[i].data, tensor.size_bytes());
      continue;
    }
    const auto* in = static_cast<const std::uint16_t*>(buffers_[i].data);
    for (std::size_t k = 0; k < tensor.size(); ++k) tensor[k] = bf16_to_float(in[k]);
  }
}

void TrainerPeer::write_back(std::size_t first, std::size_t end) {
  for (std::size_t i = first; i < std::min(end, buffers_.size()); ++i) {
    const std::span<const float> tensor = std::as_const(local_).tensor(i);
    if (!buffers_[i].bf16) {
      std::memcpy(buffers_[i].data, tensor.data(), tensor.size_bytes());
      continue;
    }
    auto* out = static_cast<std::uint16_t*>(buffers_[i].data);
    for (std::size_t k = 0; k < tensor.size(); ++k) out[k] = float_to_bf16(tensor[k]);
  }
}

}  // namespace loco::host
