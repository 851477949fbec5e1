#include "loco/train/demo.hpp"

namespace loco::train {

std::vector<std::string> DeMo::shared_names(const DemoConfig& config) {
  if (config.late) return {kParams, kPending};
  return {kParams};
}

DeMo::DeMo(const DemoConfig& config, const std::shared_ptr<const ArenaLayout>& layout,
           GatherGroup& group)
    : config_(config),
      group_(group),
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
      if (config_.late) shared_.arena(1).fill(0.0f);
      shared_.set_round(0);
      momentum_.fill(0.0f);
      adopt(loop);
      break;
    case Start::resumed: break;
    case Start::joined:
      momentum_.fill(0.0f);
      adopt(loop);
      break;
  }
}

bool DeMo::on_gradients(InnerLoop& loop) {
  const std::uint64_t next = shared_.round() + 1;
  const float lr = loop.learning_rate();  // at step shared_.round(): the loop adopted it
  const std::vector<std::byte> message = components_.contribute(momentum_, loop.grads(), lr, sent_);
  last_bytes_ = message.size();
  last_ = group_.run_gather(
      GatherInput{.round = next,
                  .contribution = message,
                  .tentative =
                      [this, next, lr](std::span<const std::vector<std::byte>> parts) {
                        last_used_ = components_.direction(parts, direction_);
                        Arena& params = tentative_.arena(0);
                        params.copy_from(shared_.arena(0));
                        if (config_.late) {
                          apply_demo_update(params, shared_.arena(1), lr, config_.weight_decay);
                          tentative_.arena(1).copy_from(direction_);
                        } else {
                          apply_demo_update(params, direction_, lr, config_.weight_decay);
                        }
                        tentative_.set_round(next);
                        return tentative_.manifest();
                      },
                  .install =
                      [this] {
                        for (std::size_t i = 0; i < shared_.parts().size(); ++i)
                          shared_.arena(i).copy_from(tentative_.arena(i));
                        shared_.set_round(tentative_.round());
                      }});
  if (last_.kind == RoundResult::Kind::committed) DemoComponents::forget(momentum_, sent_);
  if (last_.kind != RoundResult::Kind::skipped) adopt(loop);
  return false;
}

void DeMo::adopt(InnerLoop& loop) {
  loop.params().copy_from(shared_.arena(0));
  loop.set_steps(shared_.round());
}

}  // namespace loco::train
