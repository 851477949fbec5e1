#include "etcd_state.hpp"

#include <spdlog/spdlog.h>

namespace loco::tracker {

bool EtcdState::save(const proto::TrackerSnapshot& state) {
  const replica::FencedState::Saved saved = fenced_.save(state);
  if (saved == replica::FencedState::Saved::unanswered)
    spdlog::error("cannot save the state to {}: {}", where(), fenced_.error());
  return saved == replica::FencedState::Saved::saved;
}

}  // namespace loco::tracker
