#include "swarm_peer.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "fed_tokens.hpp"
#include "loco/core/error.hpp"
#include "loco/fetch/shard_feed.hpp"
#include "loco/host/peer_options.hpp"
#include "loco/host/peer_shards.hpp"
#include "loco/round/peer_session.hpp"
#include "loco/swarm/swarm_thread.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/make_strategy.hpp"
#include "loco/train/run_end.hpp"
#include "loco/train/step_loop.hpp"
#include "loco/train/training_checkpoint.hpp"
#include "peer_training.hpp"

namespace loco::peer {
namespace {

// At the run's final round: waits, at most `bound`, for the tracker to say it holds the final
// state (so that the model outlives the run's last peers), and says how the run ended on stdout.
void see_the_run_end(round::SwarmGroup& group, std::uint64_t round, const Digest& state,
                     Duration bound) {
  const std::optional<round::SwarmEvent> ended = group.wait_run_ended(bound);
  if (!ended) {
    spdlog::warn(
        "the tracker did not say that it holds the run's final state (within {} s, or before a "
        "signal); this peer's checkpoint holds it",
        std::chrono::duration_cast<std::chrono::seconds>(bound).count());
  } else if (ended->round != round || ended->hash != state) {
    spdlog::warn(
        "the tracker says the run ended at round {} with state {}; this peer holds "
        "round {}, state {}",
        ended->round, to_hex(ended->hash).substr(0, 16), round, to_hex(state).substr(0, 16));
  } else if (ended->kept) {
    spdlog::info("the tracker holds the run's final state: its organiser can export the model");
  } else {
    spdlog::info(
        "the tracker keeps no copy of the run's final state (custody is off): this "
        "peer's checkpoint holds it");
  }
  std::printf("run over: final round %llu, state %s, %s\n", static_cast<unsigned long long>(round),
              to_hex(state).substr(0, 16).c_str(),
              !ended        ? "unconfirmed by the tracker"
              : ended->kept ? "kept by the tracker"
                            : "not kept by the tracker");
  std::fflush(stdout);
}

// After the run's end, with --peer.seed-after-end: stays a member that holds the final state, so
// that the tracker names it to whoever fetches the model (loco-peer fetch-model, a late peer),
// and says so on stdout: "seeding: final round R, state H, for S s".
void seed(round::SwarmGroup& group, std::uint64_t round, const Digest& state, Duration bound) {
  if (bound <= Duration::zero()) return;
  const double seconds = std::chrono::duration<double>(bound).count();
  spdlog::info(
      "serving the run's final model to whoever fetches it for {:.0f} s (a signal stops it sooner)",
      seconds);
  std::printf("seeding: final round %llu, state %s, for %.0f s\n",
              static_cast<unsigned long long>(round), to_hex(state).substr(0, 16).c_str(), seconds);
  std::fflush(stdout);
  group.seed(bound);
}

// The run's last round (train/run_end.hpp), as the tracker's run config has it: a peer that
// joins at or past it trains no more (PeerSession::ended_before). Says so, and when this peer's
// config ends the run elsewhere.
void log_the_end(const PeerParts& p) {
  const std::uint64_t final_round = p.session.final_round();
  if (train::final_round(p.config) != final_round)
    spdlog::warn(
        "this peer's run config ends the run at round {}, the tracker's at round {}: the "
        "tracker's is the run's (check [train] steps against the published config)",
        train::final_round(p.config), final_round);
  if (p.session.ended_before())
    spdlog::info(
        "the run is over: it ended at round {}, the state this peer now holds; nothing "
        "to train",
        p.strategy().shared().round());
}

// Joins the run (PeerSession::join): the tracker gives the data shard, and the run's state if
// this peer lacks it (`resumed`: it holds its checkpoint's, whose data cursor is `cursor`), then
// starts the strategy there. Returns the data shard; nullopt when a signal stopped it first.
std::optional<data::ShardSpec> join_run(const PeerParts& p, bool resumed,
                                        const std::string& cursor) {
  const round::JoinOutcome joined = p.session.join(resumed, std::chrono::seconds(60));
  if (joined.stopped) {
    spdlog::info("stopped by a signal before joining the run");
    return std::nullopt;
  }
  const data::ShardSpec shard{joined.reply.shard_index, joined.reply.shard_count};
  if (!p.feed) {
    p.loop.set_shard(shard);
    train::log_data_sample(p.corpus, shard);
  } else if (!take_first_tokens(*p.feed, p.loop, p.corpus, shard, p.context, p.stop)) {
    spdlog::info("stopped by a signal while its data arrived");
    p.session.leave();  // stopped by a signal
    return std::nullopt;
  }
  if (!joined.fetched && resumed) {
    try {
      p.loop.sampler().restore(cursor);
    } catch (const Error&) {
      spdlog::info(
          "the tracker gave this peer another data shard, or only part of it is in yet: reading "
          "it from its start");
    }
  }
  p.session.start(joined);  // a fetched state: at the run's place in the lr schedule
  spdlog::info("joined run {} as peer {}: shard {} of {}, round {}, {} parameters, {}",
               p.options.run_id, secure::short_id(p.key.public_key()), joined.reply.shard_index,
               joined.reply.shard_count, p.strategy().shared().round(),
               p.loop.layout()->parameter_count(), train::describe_strategy(p.config));
  log_the_end(p);
  return shard;
}

// How long a peer stays at the run's end: waiting for the tracker's word (--peer.end-wait), and
// serving the final state after it (--peer.seed-after-end).
struct EndOptions {
  Duration wait{};
  Duration seed_after{};
};

EndOptions end_options(const PeerOptions& o) {
  return {.wait = net::parse_duration(o.end_wait, "--peer.end-wait", std::chrono::hours(24)),
          .seed_after = net::parse_duration(o.seed_after_end, "--peer.seed-after-end",
                                            std::chrono::hours(24 * 30))};
}

secure::KeyPair read_key(const PeerOptions& o) {
  if (o.key_file.empty())
    throw Error(ErrorCategory::config,
                "--peer.key: this peer's identity key file; make one with `loco-peer keygen "
                "--out peer.key`");
  return secure::read_key_file(o.key_file, secure::KeyOwner::peer);
}

// The session's network side: loco-peer's io_context thread (swarm/swarm_thread.hpp), sharing its
// dataset with the run's other peers and asking theirs first (host/peer_shards.hpp; `feed` null:
// no dataset), with the test-only poison, corrupt-shards and fault points.
std::unique_ptr<round::NetworkSide> swarm_side(const PeerOptions& o,
                                               const train::TrainConfig& config,
                                               const secure::KeyPair& key,
                                               const DebugFaults& faults, fetch::ShardFeed* feed) {
  swarm::SwarmConfig swarm = host::swarm_config(o, config);
  swarm.poison = o.poison;
  swarm.corrupt_shards = o.debug.corrupt_shards;
  swarm.fault_point = faults.swarm_hook();
  return host::sharing_thread(std::move(swarm), key, feed);
}

// Its own checkpoint, if it has one (it may still hold the run's current state): the data cursor
// it saved; nullopt without one.
std::optional<std::string> resume(const PeerOptions& o, train::TrainingCheckpoint& state,
                                  round::PeerSession& session, const train::InnerLoop& loop) {
  if (o.checkpoint.empty() || !std::filesystem::exists(o.checkpoint)) return std::nullopt;
  std::string cursor = state.load(o.checkpoint);
  spdlog::info("resuming from {}: round {}, step {}", o.checkpoint,
               session.strategy().shared().round(), loop.steps());
  return cursor;
}

// After the steps: at the run's final round, waits for the tracker to keep it (and seeds it);
// leaves, checkpoints, evaluates, and prints the summary lines.
void finish(const PeerParts& p, const PeerTraining& training, const EndOptions& end) {
  using Clock = PeerTraining::Clock;
  const Digest state_hash = p.group().state_hash();  // as installed or fetched: not hashed again
  const std::uint64_t round = p.strategy().shared().round();
  if (p.session.at_end()) {
    see_the_run_end(p.group(), round, state_hash, end.wait);
    seed(p.group(), round, state_hash, end.seed_after);
  }
  p.session.leave();
  p.save_checkpoint();
  const auto eval_start = Clock::now();
  const float val = p.loop.evaluate();
  const auto ended = Clock::now();
  const auto floor = p.corpus.entropy_floor();
  const std::string state_hex = to_hex(state_hash);
  const std::string id = secure::short_id(p.key.public_key());
  const auto& traffic = p.group().traffic();
  std::printf(
      "peer %s: round %llu, step %llu, validation loss %.4f%s, sent %s, received %s, "
      "state %s\n",
      id.c_str(), static_cast<unsigned long long>(p.strategy().shared().round()),
      static_cast<unsigned long long>(p.loop.steps()), val,
      floor ? fmt::format(" (floor {:.4f})", *floor).c_str() : "", megabytes(traffic.sent).c_str(),
      megabytes(traffic.received).c_str(), state_hex.substr(0, 16).c_str());
  std::printf(
      "peer %s: seconds=%.3f compute_s=%.3f network_wait_s=%.3f eval_s=%.3f sent_bytes=%llu "
      "received_bytes=%llu val_loss=%.6f in_flight_steps=%llu state=%s\n",
      id.c_str(), std::chrono::duration<double>(ended - training.started()).count(),
      training.compute_s(), p.group().network_wait_s(),
      std::chrono::duration<double>(ended - eval_start).count(),
      static_cast<unsigned long long>(traffic.sent),
      static_cast<unsigned long long>(traffic.received), val,
      static_cast<unsigned long long>(training.in_flight_steps()), state_hex.c_str());
  std::fflush(stdout);
}

}  // namespace

int run_peer(const PeerOptions& o, const std::atomic<bool>& stop) {
  try {
    // 1. The run's config, this peer's identity, its data, its inner loop, its session (the
    // strategy over the swarm, round/peer_session.hpp).
    train::TrainConfig config = host::load_run_config(o);
    train::require_own_model(config);  // before its data is read
    // From the run's mirrors, when it has a data cache: the manifest, tokenizer and validation
    // shards now, its data shard's train shards while it trains (fetch/shard_feed.hpp).
    const std::unique_ptr<fetch::ShardFeed> feed = host::start_data_feed(o, config);
    const EndOptions end = end_options(o);
    const secure::KeyPair key = read_key(o);
    model::set_compute_threads(config.train.threads);
    const auto vocab = static_cast<std::uint32_t>(config.model.gpt.vocab);
    const train::Corpus corpus = feed ? train::Corpus(feed->manifest(), feed->folder(), vocab)
                                      : train::Corpus(config.data, vocab);
    train::InnerLoop loop(config, corpus);
    const DebugFaults faults(o.debug);
    round::PeerSession session({.config = config,
                                .loop = loop,
                                .side = swarm_side(o, config, key, faults, feed.get()),
                                .stop = &stop});

    // 2. Its own checkpoint, if it has one: it may still hold the run's current state.
    train::TrainingCheckpoint state(loop, session.strategy(),
                                    train::checkpoint_identity(config, corpus));
    const std::optional<std::string> cursor = resume(o, state, session, loop);
    const PeerParts parts{.options = o,
                          .config = config,
                          .key = key,
                          .corpus = corpus,
                          .context = static_cast<std::uint32_t>(config.model.gpt.context),
                          .feed = feed.get(),
                          .loop = loop,
                          .session = session,
                          .faults = faults,
                          .checkpoint = state,
                          .stop = stop};

    // 3. Join: the tracker gives the data shard, and the run's state if this peer lacks it.
    const std::optional<data::ShardSpec> shard =
        join_run(parts, cursor.has_value(), cursor.value_or(""));
    if (!shard) return 0;

    // 4. Train (train/step_loop.hpp): DiLoCo's H inner steps then a round, or DDP's and DeMo's
    // round every step.
    PeerTraining training(parts, *shard);
    training.run();

    // 5. A round still in flight has landed (PeerSession::run); at the run's final round, wait
    // for the tracker to keep it; leave, checkpoint, and say where the run stands.
    finish(parts, training, end);
    return 0;
  } catch (const Error& e) {
    spdlog::error("loco-peer: {}", e.what());
    return 1;
  }
}

}  // namespace loco::peer
