#include "loco/train/demo.hpp"

#include <utility>

namespace loco::train {

std::vector<std::string> DeMo::shared_names(const DemoConfig& config) {
  if (config.late) return {kParams, kPending};
  return {kParams};
}

DeMo::DeMo(const DemoConfig& config, const std::shared_ptr<const ArenaLayout>& layout,
           GatherGroup& group, OverlappedGather* overlapped)
    : config_(config),
      group_(group),
      overlapped_(config.late ? overlapped : nullptr),
      components_(layout, config),
      shared_(layout, shared_names(config)),
      tentative_(layout, shared_names(config)),
      momentum_(layout),
      sent_(layout),
      direction_(layout) {}

void DeMo::begin(InnerLoop& loop, Start how) {
  switch (how) {
    case Start::fresh:  // genesis: the initial parameters, nothing pending, δ = 0
      shared_.arena(0).copy_from(loop.params());
      if (config_.late) shared_.arena(1).zero();
      shared_.set_round(0);
      momentum_.zero();
      adopt(loop);
      break;
    case Start::resumed: break;
    case Start::joined:
      momentum_.zero();
      adopt(loop);
      break;
  }
}

bool DeMo::on_gradients(InnerLoop& loop) {
  if (overlapped_ == nullptr) {
    blocking_step(loop);
    return false;
  }
  if (in_flight_) land(loop);
  start(loop);
  return false;
}

proto::StateManifest DeMo::tentative_of(std::span<const std::vector<std::byte>> parts, float lr) {
  last_used_ = components_.direction(parts, direction_);
  if (config_.late) {
    tentative_.arena(1).copy_from(direction_);
  } else {
    Arena& params = tentative_.arena(0);
    params.copy_from(shared_.arena(0));
    apply_demo_update(params, direction_, lr, config_.weight_decay);
  }
  return tentative_.manifest();
}

std::vector<std::byte> DeMo::prepare(InnerLoop& loop, float lr) {
  std::vector<std::byte> message = components_.contribute(momentum_, loop.grads(), lr, sent_);
  last_bytes_ = message.size();
  if (config_.late) {  // θ' = θ·(1 − lr·wd) − lr·pending: the parts do not enter it
    tentative_.arena(0).copy_from(shared_.arena(0));
    apply_demo_update(tentative_.arena(0), shared_.arena(1), lr, config_.weight_decay);
  }
  tentative_.set_round(shared_.round() + 1);
  return message;
}

void DeMo::blocking_step(InnerLoop& loop) {
  const std::uint64_t next = shared_.round() + 1;
  const float lr = loop.learning_rate();  // at step shared_.round(): the loop adopted it
  const std::vector<std::byte> message = prepare(loop, lr);
  last_ =
      group_.run_gather(GatherInput{.round = next,
                                    .contribution = message,
                                    .tentative =
                                        [this, lr](std::span<const std::vector<std::byte>> parts) {
                                          return tentative_of(parts, lr);
                                        },
                                    .install = [this] { install(); }});
  if (last_.kind == RoundResult::Kind::committed) DemoComponents::forget(momentum_, sent_);
  if (last_.kind != RoundResult::Kind::skipped) adopt(loop);
}

// Copies: θ' into the loop (P floats) and the message to the group; the group's thread writes
// pending' and hashes θ' ‖ pending' once, and copies them once more to serve them from the commit.
void DeMo::start(InnerLoop& loop) {
  const std::uint64_t next = shared_.round() + 1;
  const float lr = loop.learning_rate();  // at step shared_.round(): land() or begin() set it
  std::vector<std::byte> message = prepare(loop, lr);
  // The next step computes at θ' while the round runs (the group's thread only reads θ').
  loop.params().copy_from(tentative_.arena(0));
  loop.set_steps(next);
  in_flight_ = true;
  overlapped_->start_gather(
      GatherStart{.round = next,
                  .contribution = std::move(message),
                  .tentative =
                      [this, lr](std::span<const std::vector<std::byte>> parts) {
                        return tentative_of(parts, lr);
                      },
                  .bytes = [this] { return tentative_.bytes(); }});
}

void DeMo::land(InnerLoop& loop) {
  in_flight_ = false;
  last_ = overlapped_->land_gather([this] { install(); });
  if (last_.kind == RoundResult::Kind::committed) {
    DemoComponents::forget(momentum_, sent_);  // the loop already holds θ' (start)
  } else {
    adopt(loop);  // skipped: back to θ and its step; replaced: the fetched state
  }
}

void DeMo::finish(InnerLoop& loop) {
  if (in_flight_) land(loop);
}

void DeMo::install() {
  for (std::size_t i = 0; i < shared_.parts().size(); ++i)
    shared_.arena(i).copy_from(tentative_.arena(i));
  shared_.set_round(tentative_.round());
}

void DeMo::adopt(InnerLoop& loop) {
  loop.params().copy_from(shared_.arena(0));
  loop.set_steps(shared_.round());
}

}  // namespace loco::train
