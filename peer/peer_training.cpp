#include "peer_training.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdio>

#include "fed_tokens.hpp"
#include "loco/proto/parameter_sketch.hpp"

namespace loco::peer {
namespace {

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

}  // namespace

std::string megabytes(std::uint64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

void PeerParts::save_checkpoint() const {
  if (options.checkpoint.empty()) return;
  checkpoint.save(options.checkpoint);
}

PeerTraining::PeerTraining(const PeerParts& parts, data::ShardSpec shard)
    : p_(parts),
      shard_(shard),
      interval_(parts.loop.tokens_per_step()),
      rounds_seen_(parts.group().rounds_run()),
      last_checkpoint_round_(parts.strategy().shared().round()) {}

void PeerTraining::run() {
  started_ = Clock::now();
  if (p_.feed) take_more_tokens(*p_.feed, p_.loop, p_.corpus, p_.context, p_.stop);  // 1st step's
  p_.session.run({.computed = [this](const train::StepOutcome& s) { computed(s); },
                  .done = [this](const train::StepOutcome& s) { done(s); }});
  if (p_.group().rounds_run() != rounds_seen_) print_landed();  // landed in run()
}

// Before the strategy's after_step: the phase loss a round that starts there reports, the
// debug faults of an inner step, and whether a fragment was still on the wire.
void PeerTraining::computed(const train::StepOutcome& s) {
  compute_s_ += s.compute_s;
  interval_.add(s.loss);
  round_loss_ += s.loss;
  ++round_steps_;
  p_.group().note_phase_loss(static_cast<float>(round_loss_ / static_cast<double>(round_steps_)));
  p_.faults.inner_step(p_.strategy().shared().round() + 1,
                       std::chrono::duration<double>(s.compute_s));
  if (p_.session.async_group().in_flight()) ++in_flight_steps_;
}

void PeerTraining::done(const train::StepOutcome& s) {
  const proto::JoinReply& latest = p_.group().last_join();  // a join again may change the shard
  follow_assignment(shard_, {latest.shard_index, latest.shard_count}, p_.feed, p_.loop);
  if (p_.feed && p_.session.more())
    take_more_tokens(*p_.feed, p_.loop, p_.corpus, p_.context, p_.stop);  // the next step's
  if (p_.group().rounds_run() != rounds_seen_) {
    print_landed();
    publish_stats();  // the traffic and relayed bytes of the round that landed
  }
  if (s.step % p_.config.train.log_every == 0 || s.step == p_.config.train.steps)
    log_progress(s.step);
  if (p_.strategy().shared().round() >= last_checkpoint_round_ + p_.options.checkpoint_rounds) {
    p_.save_checkpoint();
    last_checkpoint_round_ = p_.strategy().shared().round();
  }
}

void PeerTraining::log_progress(std::uint64_t step) {
  const train::ProgressInterval::Figures f = interval_.take();
  spdlog::info(
      "round {:>4} | step {:>6}/{} | loss {:.4f} | {:.0f} tok/s | sent {} recv {} "
      "| net wait {:.1f} s",
      p_.strategy().shared().round(), step, p_.config.train.steps, f.mean_loss, f.tokens_per_s,
      megabytes(p_.group().traffic().sent), megabytes(p_.group().traffic().received),
      p_.group().network_wait_s());
  stats_.loss = f.mean_loss;
  stats_.tokens_per_s = static_cast<float>(f.tokens_per_s);
  publish_stats();
}

void PeerTraining::publish_stats() {
  stats_.state_round = p_.strategy().shared().round();
  stats_.inner_step = p_.loop.steps();
  stats_.bytes_sent = p_.group().traffic().sent;
  stats_.bytes_received = p_.group().traffic().received;
  stats_.network_wait_s = static_cast<float>(p_.group().network_wait_s());
  stats_.bytes_relayed = p_.group().traffic().relayed;
  if (p_.config.strategy.gossip_group != 0)
    stats_.sketch = proto::sketch_parameters(p_.strategy().shared().arena(0).data());
  p_.group().publish(stats_);
}

// The round line of the rounds that landed since the last one, with the mean loss of the steps
// since (DiLoCo's round lands while the next phase runs: the steps it overlapped).
void PeerTraining::print_landed() {
  rounds_seen_ = p_.group().rounds_run();
  if (round_steps_ > 0) printed_loss_ = round_loss_ / static_cast<double>(round_steps_);
  print_round(p_.group().last_round(), p_.strategy().shared(), printed_loss_);
  round_loss_ = 0;
  round_steps_ = 0;
}

}  // namespace loco::peer
