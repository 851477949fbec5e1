// TrainerPeer's Streaming DiLoCo rounds (host/trainer_peer.hpp): the trainer's buffers of one
// fragment around train::StreamingDiLoCo's start_fragment and land_fragment, and the schedule the
// trainer follows (train/fragments.hpp), as loco-peer's StreamingDiLoCo::after_step keeps it.
//
// Copies per fragment round, for the fragment's n_p parameters: its buffers into θ_local at the
// start (4·n_p bytes) and again at the landing (the trainer's τ steps since), the merged values
// back into them (4·n_p; every buffer, 4n, when replaced), beside StreamingDiLoCo's own.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "loco/core/error.hpp"
#include "loco/host/trainer_peer.hpp"
#include "loco/train/strategy_kinds.hpp"

namespace loco::host {

std::vector<std::vector<std::size_t>> TrainerPeer::tensors_by_fragment(
    const std::vector<train::Fragment>& fragments) {
  std::vector<std::vector<std::size_t>> tensors(fragments.size());
  for (std::size_t p = 0; p < fragments.size(); ++p)
    for (const ArenaRange& r : fragments[p].ranges)
      for (std::size_t t = r.first_tensor; t < r.end_tensor; ++t) tensors[p].push_back(t);
  return tensors;
}

std::uint64_t TrainerPeer::state_step() const {
  const std::uint64_t round = state_round();
  if (streaming_) return train::landed_step(streaming_->config(), round);
  return round * config_.strategy.diloco_h;
}

void TrainerPeer::check_streaming(const char* function) const {
  if (!streaming_)
    throw Error(
        ErrorCategory::invalid_argument,
        fmt::format("{}: the run's [strategy] kind is \"{}\", not \"{}\"", function,
                    config_.strategy.kind, train::strategy_name(train::StrategyKind::streaming)));
}

const std::vector<std::size_t>& TrainerPeer::fragment_tensors(std::size_t p) const {
  check_streaming("fragment_tensors");
  if (p >= fragment_tensors_.size())
    throw Error(ErrorCategory::invalid_argument,
                fmt::format("fragment {}: the run has {} fragments (strategy.fragments)", p,
                            fragment_tensors_.size()));
  return fragment_tensors_[p];
}

std::size_t TrainerPeer::fragment_of(std::size_t tensor) const {
  check_streaming("fragment_of");
  for (std::size_t p = 0; p < fragment_tensors_.size(); ++p)
    if (std::ranges::binary_search(fragment_tensors_[p], tensor)) return p;
  throw Error(
      ErrorCategory::invalid_argument,
      fmt::format("tensor index {}: the model has {} tensors", tensor, layout_->tensor_count()));
}

std::size_t TrainerPeer::next_fragment() const {
  check_streaming("next_fragment");
  return streaming_->fragment_started() ? streaming_->started_fragment()
                                        : streaming_->next_fragment();
}

TrainerPeer::Due TrainerPeer::fragment_due(std::uint64_t step) const {
  check_streaming("fragment_due");
  const train::FragmentSchedule& schedule = streaming_->schedule();
  bool sends = false;
  for (std::size_t slot = 0; slot < schedule.fragments(); ++slot)
    sends = sends || schedule.sends(slot, step);
  // This step's round has started (and, without eager updates and τ = 0, landed): nothing more.
  const bool this_step = step == fragment_started_at_;
  if (!streaming_->fragment_started()) return sends && !this_step ? Due::start : Due::nothing;
  if (eager()) return sends && !this_step ? Due::land : Due::nothing;  // before the next start
  return step >= fragment_started_at_ + schedule.tau() ? Due::land : Due::nothing;
}

std::size_t TrainerPeer::fragment_start(std::uint64_t step, float loss) {
  check_streaming("fragment_start");
  if (phase_ != Phase::joined)
    throw Error(ErrorCategory::invalid_argument, "fragment_start: join the run first");
  if (streaming_->fragment_started())
    throw Error(ErrorCategory::invalid_argument,
                fmt::format("fragment_start: fragment {}'s round is started; land it first",
                            streaming_->started_fragment()));
  times_ = {};
  const TimePoint start = steady_now();
  const std::size_t p = streaming_->next_fragment();
  for (const ArenaRange& r : streaming_->fragments()[p].ranges)
    gather(r.first_tensor, r.end_tensor);
  times_.gather_s = std::chrono::duration<double>(steady_now() - start).count();
  group_.note_phase_loss(loss);
  const TimePoint delta = steady_now();
  streaming_->start_fragment(local_);  // Δ_p into the group's buffer: the network thread's now
  times_.diloco.delta_s = std::chrono::duration<double>(steady_now() - delta).count();
  if (eager()) {  // the merge of the round landed before (delayed) or of the proxy (overlapped)
    const TimePoint write = steady_now();
    for (const ArenaRange& r : streaming_->fragments()[p].ranges)
      write_back(r.first_tensor, r.end_tensor);
    times_.write_back_s = std::chrono::duration<double>(steady_now() - write).count();
  }
  fragment_started_at_ = step;
  return p;
}

train::RoundResult TrainerPeer::fragment_land() {
  check_streaming("fragment_land");
  if (!streaming_->fragment_started())
    throw Error(ErrorCategory::invalid_argument, "fragment_land: no fragment round started");
  const auto seconds_since = [](TimePoint start) {
    return std::chrono::duration<double>(steady_now() - start).count();
  };
  const std::vector<ArenaRange>& ranges =
      streaming_->fragments()[streaming_->started_fragment()].ranges;
  // The trainer's τ steps since the start: the merge takes the fragment as it is now. An
  // interrupted peer still lands: the group says skipped soon after the stop.
  const TimePoint gather_start = steady_now();
  for (const ArenaRange& r : ranges) gather(r.first_tensor, r.end_tensor);
  times_.gather_s += seconds_since(gather_start);
  const TimePoint exchange = steady_now();
  const train::RoundResult result = streaming_->land_fragment(local_);
  times_.diloco.exchange_s = seconds_since(exchange);
  hash_ = result.state;
  const TimePoint write = steady_now();
  if (result.kind == train::RoundResult::Kind::committed && !eager()) {  // eager: at the start
    for (const ArenaRange& r : ranges) write_back(r.first_tensor, r.end_tensor);
  } else if (result.kind == train::RoundResult::Kind::replaced) {
    write_back();
    fragment_started_at_ = 0;  // the trainer goes on from state_step()
  }
  times_.write_back_s = seconds_since(write);
  return result;
}

bool TrainerPeer::eager() const {
  return streaming_->config().eager != train::Eager::none;
}

train::RoundResult TrainerPeer::sync_fragment_round(float loss) {
  if (eager())
    throw Error(ErrorCategory::invalid_argument,
                "round: a Streaming peer with eager updates keeps each round in flight until the "
                "next one starts (fragment_due, fragment_start, fragment_land)");
  fragment_start(fragment_started_at_, loss);
  return fragment_land();
}

}  // namespace loco::host
