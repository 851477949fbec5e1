#include "swarm_peer.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "fed_tokens.hpp"
#include "loco/core/error.hpp"
#include "loco/fetch/shard_feed.hpp"
#include "loco/host/peer_options.hpp"
#include "loco/proto/parameter_sketch.hpp"
#include "loco/round/swarm_async_group.hpp"
#include "loco/round/swarm_group.hpp"
#include "loco/swarm/swarm_thread.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/make_strategy.hpp"
#include "loco/train/run_end.hpp"
#include "loco/train/step_loop.hpp"
#include "loco/train/training_checkpoint.hpp"

namespace loco::peer {
namespace {

using Clock = std::chrono::steady_clock;

std::string megabytes(std::uint64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

// The line a round ends with (swarm_peer.hpp), with the hash the group computed for the round.
void print_round(const train::RoundResult& r, const train::SharedState& shared, double loss) {
  static constexpr std::array kKinds = {"committed", "skipped", "replaced"};
  // A round paced by the tracker adds the next phase's seconds as the tracker set it; a weighted
  // round (rounds bounded by time) this peer's share of the mean, last.
  const std::string phase =
      r.phase > Duration::zero()
          ? fmt::format(" phase {:.3f}", std::chrono::duration<double>(r.phase).count())
          : "";
  const std::string share = r.share > 0 ? fmt::format(" share {:.4f}", r.share) : "";
  std::printf("round %llu %s members %zu loss %.4f state %s%s%s\n",
              static_cast<unsigned long long>(shared.round()),
              kKinds.at(static_cast<std::size_t>(r.kind)), r.members, loss,
              to_hex(r.state).substr(0, 16).c_str(), phase.c_str(), share.c_str());
  std::fflush(stdout);
}

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

}  // namespace

int run_peer(const PeerOptions& o, const std::atomic<bool>& stop) {
  try {
    // 1. The run's config, this peer's identity, its data, its inner loop, the strategy with the
    // swarm.
    train::TrainConfig config = host::load_run_config(o);
    train::require_own_model(config);  // before its data is read
    // From the run's mirrors, when it has a data cache: the manifest, tokenizer and validation
    // shards now, its data shard's train shards while it trains (fetch/shard_feed.hpp).
    const std::unique_ptr<fetch::ShardFeed> feed = host::start_data_feed(o, config);
    const Duration end_wait =
        net::parse_duration(o.end_wait, "--peer.end-wait", std::chrono::hours(24));
    const Duration seed_after_end =
        net::parse_duration(o.seed_after_end, "--peer.seed-after-end", std::chrono::hours(24 * 30));
    if (o.key_file.empty())
      throw Error(ErrorCategory::config,
                  "--peer.key: this peer's identity key file; make one with `loco-peer keygen "
                  "--out peer.key`");
    const secure::KeyPair key = secure::read_key_file(o.key_file, secure::KeyOwner::peer);
    model::set_compute_threads(config.train.threads);
    const auto vocab = static_cast<std::uint32_t>(config.model.gpt.vocab);
    const train::Corpus corpus = feed ? train::Corpus(feed->manifest(), feed->folder(), vocab)
                                      : train::Corpus(config.data, vocab);
    const auto context = static_cast<std::uint32_t>(config.model.gpt.context);
    train::InnerLoop loop(config, corpus);
    const DebugFaults faults(o.debug);
    swarm::SwarmConfig swarm = host::swarm_config(o, config);
    swarm.poison = o.poison;
    swarm.fault_point = faults.swarm_hook();
    round::SwarmGroup group(std::make_unique<swarm::SwarmThread>(std::move(swarm), key), &stop);
    round::SwarmAsyncGroup async_group(group);  // Streaming's rounds, over the same swarm
    const std::unique_ptr<train::Strategy> made =
        train::make_strategy(config, loop, group, &async_group, &group, &group, steady_now, &group);
    train::Strategy& strategy = *made;  // DiLoCo, DDP, Streaming DiLoCo or DeMo
    group.bind(strategy.shared());
    strategy.begin(loop, train::Start::fresh);
    const proto::StateManifest genesis = strategy.shared().manifest();

    // 2. Its own checkpoint, if it has one: it may still hold the run's current state.
    train::TrainingCheckpoint state(loop, strategy, train::checkpoint_identity(config, corpus));
    std::string cursor;
    bool resumed = false;
    if (!o.checkpoint.empty() && std::filesystem::exists(o.checkpoint)) {
      cursor = state.load(o.checkpoint);
      resumed = true;
      spdlog::info("resuming from {}: round {}, step {}", o.checkpoint, strategy.shared().round(),
                   loop.steps());
    }

    // 3. Join: the tracker gives the data shard, and the run's state if this peer lacks it.
    const round::JoinOutcome joined =
        group.join(genesis, /*at_genesis=*/!resumed, std::chrono::seconds(60));
    if (joined.stopped) {
      spdlog::info("stopped by a signal before joining the run");
      return 0;
    }
    data::ShardSpec shard{joined.reply.shard_index, joined.reply.shard_count};
    if (!feed) {
      loop.set_shard(shard);
      train::log_data_sample(corpus, shard);
    } else if (!take_first_tokens(*feed, loop, corpus, shard, context, stop)) {
      spdlog::info("stopped by a signal while its data arrived");
      group.leave("stopped by a signal");
      return 0;
    }
    if (joined.fetched) {
      strategy.begin(loop, train::Start::joined);  // at the run's place in the lr schedule
      strategy.joined_paced(joined.phase, joined.told);
    } else if (resumed) {
      try {
        loop.sampler().restore(cursor);
      } catch (const Error&) {
        spdlog::info(
            "the tracker gave this peer another data shard, or only part of it is in yet: reading "
            "it from its start");
      }
    }
    spdlog::info("joined run {} as peer {}: shard {} of {}, round {}, {} parameters, {}", o.run_id,
                 secure::short_id(key.public_key()), joined.reply.shard_index,
                 joined.reply.shard_count, strategy.shared().round(),
                 loop.layout()->parameter_count(), train::describe_strategy(config));
    // The run's last round (train/run_end.hpp), as the tracker's run config has it: a peer that
    // joins at or past it trains no more.
    const std::uint64_t final_round = joined.reply.final_round;
    if (train::final_round(config) != final_round)
      spdlog::warn(
          "this peer's run config ends the run at round {}, the tracker's at round {}: the "
          "tracker's is the run's (check [train] steps against the published config)",
          train::final_round(config), final_round);
    const bool ended_before = final_round != 0 && strategy.shared().round() >= final_round;
    if (ended_before)
      spdlog::info(
          "the run is over: it ended at round {}, the state this peer now holds; nothing "
          "to train",
          strategy.shared().round());

    // 4. Train (train/step_loop.hpp): DiLoCo's H inner steps then a round, or DDP's and DeMo's
    // round every step.
    const auto checkpoint = [&] {
      if (o.checkpoint.empty()) return;
      state.save(o.checkpoint);
    };
    // What the heartbeats tell the tracker, renewed every round and progress line: the traffic,
    // the bytes relayed, the figures of the last progress line and, in gossip mode, a sketch of θ
    // (for the spread on its /status and /metrics).
    const bool gossip = config.strategy.gossip_group != 0;
    proto::Heartbeat stats{};
    const auto publish_stats = [&] {
      stats.state_round = strategy.shared().round();
      stats.inner_step = loop.steps();
      stats.bytes_sent = group.traffic().sent;
      stats.bytes_received = group.traffic().received;
      stats.network_wait_s = static_cast<float>(group.network_wait_s());
      stats.bytes_relayed = group.traffic().relayed;
      if (gossip) stats.sketch = proto::sketch_parameters(strategy.shared().arena(0).data());
      group.publish(stats);
    };
    train::ProgressInterval interval(loop.tokens_per_step());
    double round_loss = 0, printed_loss = 0;
    std::uint64_t round_steps = 0, rounds_seen = group.rounds_run();
    std::uint64_t last_checkpoint_round = strategy.shared().round();
    // The round line of the rounds that landed since the last one, with the mean loss of the steps
    // since (DiLoCo's round lands while the next phase runs: the steps it overlapped).
    const auto print_landed = [&] {
      rounds_seen = group.rounds_run();
      if (round_steps > 0) printed_loss = round_loss / static_cast<double>(round_steps);
      print_round(group.last_round(), strategy.shared(), printed_loss);
      round_loss = 0;
      round_steps = 0;
    };
    const auto started = Clock::now();
    double compute_s = 0;  // inner steps: forward, backward and the local AdamW step
    // Streaming: inner steps that ended with a fragment still on the wire (its mean not in yet),
    // the overlap of communication with compute that the summary line reports.
    std::uint64_t in_flight_steps = 0;
    // A step while the run has more (train/run_end.hpp: train.steps and the run's final round, or
    // with rounds bounded by time the final round only).
    const auto more = [&] {
      return !ended_before && train::more_to_train(config, loop.steps(), strategy.shared().round(),
                                                   group.round_begun(), final_round);
    };
    // Before the strategy's after_step: the phase loss a round that starts there reports, the
    // debug faults of an inner step, and whether a fragment was still on the wire.
    const auto computed = [&](const train::StepOutcome& s) {
      compute_s += s.compute_s;
      interval.add(s.loss);
      round_loss += s.loss;
      ++round_steps;
      group.note_phase_loss(static_cast<float>(round_loss / static_cast<double>(round_steps)));
      faults.inner_step(strategy.shared().round() + 1, std::chrono::duration<double>(s.compute_s));
      if (async_group.in_flight()) ++in_flight_steps;
    };
    const auto done = [&](const train::StepOutcome& s) {
      const proto::JoinReply& latest = group.last_join();  // a join again may change the shard
      follow_assignment(shard, {latest.shard_index, latest.shard_count}, feed.get(), loop);
      if (feed && more()) take_more_tokens(*feed, loop, corpus, context, stop);  // the next step's
      if (group.rounds_run() != rounds_seen) {
        print_landed();
        publish_stats();  // the traffic and relayed bytes of the round that landed
      }
      if (s.step % config.train.log_every == 0 || s.step == config.train.steps) {
        const train::ProgressInterval::Figures f = interval.take();
        spdlog::info(
            "round {:>4} | step {:>6}/{} | loss {:.4f} | {:.0f} tok/s | sent {} recv {} "
            "| net wait {:.1f} s",
            strategy.shared().round(), s.step, config.train.steps, f.mean_loss, f.tokens_per_s,
            megabytes(group.traffic().sent), megabytes(group.traffic().received),
            group.network_wait_s());
        stats.loss = f.mean_loss;
        stats.tokens_per_s = static_cast<float>(f.tokens_per_s);
        publish_stats();
      }
      if (strategy.shared().round() >= last_checkpoint_round + o.checkpoint_rounds) {
        checkpoint();
        last_checkpoint_round = strategy.shared().round();
      }
    };
    if (feed) take_more_tokens(*feed, loop, corpus, context, stop);  // before the first step
    train::run_steps(loop, strategy, more, &stop, {.computed = computed, .done = done});

    // 5. A round still in flight has landed (run_steps); at the run's final round, wait for the
    // tracker to keep it; leave, checkpoint, and say where the run stands.
    if (group.rounds_run() != rounds_seen) print_landed();
    const Digest state_hash = group.state_hash();  // as installed or fetched: not hashed again
    const bool at_end =
        !stop.load() && final_round != 0 && strategy.shared().round() >= final_round;
    if (at_end) {
      see_the_run_end(group, strategy.shared().round(), state_hash, end_wait);
      seed(group, strategy.shared().round(), state_hash, seed_after_end);
    }
    group.leave(stop.load() ? "stopped by a signal"
                : at_end    ? "the run is over"
                            : "finished its steps");
    checkpoint();
    const auto eval_start = Clock::now();
    const float val = loop.evaluate();
    const auto ended = Clock::now();
    const auto floor = corpus.entropy_floor();
    const std::string state_hex = to_hex(state_hash);
    std::printf(
        "peer %s: round %llu, step %llu, validation loss %.4f%s, sent %s, received %s, "
        "state %s\n",
        secure::short_id(key.public_key()).c_str(),
        static_cast<unsigned long long>(strategy.shared().round()),
        static_cast<unsigned long long>(loop.steps()), val,
        floor ? fmt::format(" (floor {:.4f})", *floor).c_str() : "",
        megabytes(group.traffic().sent).c_str(), megabytes(group.traffic().received).c_str(),
        state_hex.substr(0, 16).c_str());
    std::printf(
        "peer %s: seconds=%.3f compute_s=%.3f network_wait_s=%.3f eval_s=%.3f sent_bytes=%llu "
        "received_bytes=%llu val_loss=%.6f in_flight_steps=%llu state=%s\n",
        secure::short_id(key.public_key()).c_str(),
        std::chrono::duration<double>(ended - started).count(), compute_s, group.network_wait_s(),
        std::chrono::duration<double>(ended - eval_start).count(),
        static_cast<unsigned long long>(group.traffic().sent),
        static_cast<unsigned long long>(group.traffic().received), val,
        static_cast<unsigned long long>(in_flight_steps), state_hex.c_str());
    std::fflush(stdout);
    return 0;
  } catch (const Error& e) {
    spdlog::error("loco-peer: {}", e.what());
    return 1;
  }
}

}  // namespace loco::peer
