#include "loco/round/swarm_async_group.hpp"

#include <cmath>

#include "loco/core/assert.hpp"
#include "loco/core/sum_of_squares.hpp"

namespace loco::round {

train::AsyncOuterGroup::Handle SwarmAsyncGroup::start_round(std::size_t,
                                                            std::span<const float> delta,
                                                            train::Landing landing) {
  const double squares = sum_of_squares(delta);  // ‖Δ_p‖ for the tracker's screening
  const std::uint64_t round = group_.shared().round() + 1;
  install_ = std::move(landing.install);
  // The tentative state is held whole: the network thread serves it from the commit on.
  auto state = std::make_shared<const train::SharedState*>();
  group_.begin_round(round, delta, static_cast<float>(std::sqrt(squares)), /*claim=*/{},
                     ComputeLink::Tentative{.manifest =
                                                [state, tentative = std::move(landing.tentative)](
                                                    const proto::RoundMean& mean) {
                                                  // A fragment's mean, read whole.
                                                  *state = &tentative(mean.values());
                                                  return (*state)->manifest();
                                                },
                                            .gathered = {},
                                            .bytes = [state] { return (*state)->bytes(); }});
  return round;
}

train::RoundResult SwarmAsyncGroup::finish_round(Handle handle) {
  LOCO_ASSERT(handle == group_.shared().round() + 1, "a fragment round finished out of order");
  const train::RoundResult result = group_.end_round(train::RoundInput{
      .round = handle, .delta = {}, .delta_norm = 0, .tentative = {}, .install = install_});
  if (result.kind == train::RoundResult::Kind::committed) members_ = result.members;
  return result;
}

}  // namespace loco::round
