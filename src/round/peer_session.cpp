#include "loco/round/peer_session.hpp"

#include <utility>

#include "loco/train/make_strategy.hpp"
#include "loco/train/run_end.hpp"

namespace loco::round {

PeerSession::PeerSession(PeerSetup setup)
    : config_(setup.config),
      loop_(setup.loop),
      stop_(setup.stop),
      group_(std::move(setup.side), setup.stop),
      async_group_(group_) {
  if (setup.gather) gather_ = setup.gather(group_);
  train::GatherGroup* gather = gather_ ? gather_.get() : static_cast<train::GatherGroup*>(&group_);
  strategy_ = train::make_strategy(config_, loop_, group_, &async_group_, gather, &group_,
                                   std::move(setup.clock), &group_);
  group_.bind(strategy_->shared());
  strategy_->begin(loop_, train::Start::fresh);
  genesis_ = strategy_->shared().manifest();
}

JoinOutcome PeerSession::join(bool resumed, Duration patience) {
  return group_.join(genesis_, /*at_genesis=*/!resumed, patience);
}

void PeerSession::start(const JoinOutcome& joined) {
  if (joined.fetched) strategy_->begin(loop_, train::Start::joined);
  strategy_->joined_paced(joined.phase, joined.told);  // runs paced by the tracker
  final_round_ = joined.reply.final_round;
  ended_before_ = final_round_ != 0 && strategy_->shared().round() >= final_round_;
}

bool PeerSession::more() const {
  return !ended_before_ && train::more_to_train(config_, loop_.steps(), strategy_->shared().round(),
                                                group_.round_begun(), final_round_);
}

void PeerSession::run(const train::StepHooks& hooks) {
  train::run_steps(
      loop_, *strategy_, [this] { return more(); }, stop_, hooks);
}

bool PeerSession::at_end() const {
  return !(stop_ != nullptr && stop_->load()) && final_round_ != 0 &&
         strategy_->shared().round() >= final_round_;
}

void PeerSession::leave() {
  group_.leave(stop_ != nullptr && stop_->load() ? "stopped by a signal"
               : at_end()                        ? "the run is over"
                                                 : "finished its steps");
}

}  // namespace loco::round
