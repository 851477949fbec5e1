#include "loco/train/sparseloco.hpp"

namespace loco::train {

SparseLoCo::SparseLoCo(const SparseLoCoConfig& config,
                       const std::shared_ptr<const ArenaLayout>& layout, GatherGroup& group)
    : config_(config),
      group_(group),
      components_(layout, config),
      shared_(layout, shared_names()),
      tentative_(layout, shared_names()),
      error_(layout),
      sent_(layout),
      mean_(layout) {
  config_.validate();
}

void SparseLoCo::begin(InnerLoop& loop, Start how) {
  switch (how) {
    case Start::fresh:  // genesis: the initial parameters, e = 0
      shared_.arena(0).copy_from(loop.params());
      shared_.set_round(0);
      error_.zero();
      break;
    case Start::resumed: break;
    case Start::joined:
      forget_error();
      adopt(loop);
      break;
  }
}

void SparseLoCo::after_step(InnerLoop& loop) {
  if (loop.steps() % config_.inner_steps == 0) round(loop);
}

RoundResult SparseLoCo::round(InnerLoop& loop) {
  const RoundResult result = round(loop.params());
  if (result.kind == RoundResult::Kind::replaced) adopt(loop);
  return result;
}

RoundResult SparseLoCo::round(Arena& local) {
  const std::uint64_t next = shared_.round() + 1;
  const std::vector<std::byte> message =
      components_.contribute(error_, shared_.arena(0), local, sent_);
  last_bytes_ = message.size();
  last_ = group_.run_gather(
      GatherInput{.round = next,
                  .contribution = message,
                  .tentative =
                      [this, next](std::span<const std::vector<std::byte>> parts) {
                        last_used_ = components_.aggregate(parts, mean_);
                        last_clipped_ = components_.last_clipped();
                        tentative_.arena(0).copy_from(shared_.arena(0));
                        apply_sparseloco_update(tentative_.arena(0), mean_, config_.outer_lr);
                        tentative_.set_round(next);
                        return tentative_.manifest();
                      },
                  .install = [this] { install(); }});
  if (last_.kind == RoundResult::Kind::committed) SparseLoCoComponents::forget(error_, sent_);
  local.copy_from(shared_.arena(0));  // the class comment: a skipped round too
  return last_;
}

void SparseLoCo::install() {
  shared_.arena(0).copy_from(tentative_.arena(0));
  shared_.set_round(tentative_.round());
}

void SparseLoCo::adopt(InnerLoop& loop) {
  loop.params().copy_from(shared_.arena(0));
  loop.set_steps(shared_.round() * config_.inner_steps);
}

}  // namespace loco::train
