#include "loco/train/ddp.hpp"

namespace loco::train {

DataParallel::DataParallel(const std::shared_ptr<const ArenaLayout>& layout,
                           const optim::AdamWConfig& adamw, OuterGroup& group)
    : group_(group),
      shared_(layout, shared_names()),
      tentative_(layout, shared_names()),
      next_(layout, adamw),
      mean_(layout) {}

void DataParallel::begin(InnerLoop& loop, Start how) {
  switch (how) {
    case Start::fresh:  // genesis: the initial parameters, zero moments, no step taken
      shared_.arena(0).copy_from(loop.params());
      shared_.arena(1).zero();
      shared_.arena(2).zero();
      shared_.set_round(0);
      adopt(loop);
      break;
    case Start::resumed: break;
    case Start::joined: adopt(loop); break;
  }
}

bool DataParallel::on_gradients(InnerLoop& loop) {
  const std::uint64_t next = shared_.round() + 1;
  const float lr = loop.learning_rate();  // at step shared_.round(): the loop adopted it
  last_ = group_.run_round(
      RoundInput{.round = next,
                 .delta = loop.grads().data(),
                 .delta_norm = static_cast<float>(optim::global_norm(loop.grads())),
                 .tentative =
                     [this, next, lr](std::span<const float> mean) {
                       std::copy(mean.begin(), mean.end(), mean_.data().begin());
                       tentative_.arena(0).copy_from(shared_.arena(0));
                       next_.m().copy_from(shared_.arena(1));
                       next_.v().copy_from(shared_.arena(2));
                       next_.set_steps(shared_.round());
                       next_.step(tentative_.arena(0), mean_, lr);
                       tentative_.arena(1).copy_from(next_.m());
                       tentative_.arena(2).copy_from(next_.v());
                       tentative_.set_round(next);
                       return tentative_.manifest();
                     },
                 .install =
                     [this] {
                       for (std::size_t i = 0; i < 3; ++i)
                         shared_.arena(i).copy_from(tentative_.arena(i));
                       shared_.set_round(tentative_.round());
                     }});
  if (last_.kind != RoundResult::Kind::skipped) adopt(loop);
  return false;
}

void DataParallel::adopt(InnerLoop& loop) {
  loop.params().copy_from(shared_.arena(0));
  loop.optimizer().m().copy_from(shared_.arena(1));
  loop.optimizer().v().copy_from(shared_.arena(2));
  loop.optimizer().set_steps(shared_.round());
  loop.set_steps(shared_.round());
}

}  // namespace loco::train
