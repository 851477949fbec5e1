#include "loco/train/local_groups.hpp"

#include "loco/core/assert.hpp"
#include "loco/train/disagreement_scale.hpp"

namespace loco::train {

RoundResult SoloGroup::run_round(const RoundInput& input) {
  input.tentative(input.delta);
  input.install();
  return RoundResult{.kind = RoundResult::Kind::committed, .members = 1};
}

class ThreadGroup::Member final : public OuterGroup {
 public:
  Member(ThreadGroup& group, std::size_t index) : group_(group), index_(index) {}
  RoundResult run_round(const RoundInput& input) override {
    group_.arrive(index_, input);
    return RoundResult{.kind = RoundResult::Kind::committed, .members = group_.rounds_.size()};
  }

 private:
  ThreadGroup& group_;
  std::size_t index_;
};

ThreadGroup::ThreadGroup(std::size_t members, std::size_t disagreement_block)
    : rounds_(members), disagreement_block_(disagreement_block), deltas_(members) {
  for (std::size_t i = 0; i < members; ++i) members_.push_back(std::make_unique<Member>(*this, i));
}

ThreadGroup::~ThreadGroup() = default;

OuterGroup& ThreadGroup::member(std::size_t index) {
  return *members_.at(index);
}

// The mean is summed in member order from zero, then divided by M: every member gets the same bits.
void ThreadGroup::arrive(std::size_t index, const RoundInput& input) {
  rounds_.run(
      index, [&] { deltas_[index].assign(input.delta.begin(), input.delta.end()); },
      [&] {
        sum_.assign(input.delta.size(), 0.0f);
        for (const auto& d : deltas_)
          for (std::size_t i = 0; i < d.size(); ++i) sum_[i] = sum_[i] + d[i];
        const auto m = static_cast<float>(deltas_.size());
        for (float& v : sum_) v = v / m;
        if (disagreement_block_ > 0) scale_by_disagreement(sum_, deltas_, disagreement_block_);
      },
      [&] { return input.tentative(sum_).state_hash(); });
  input.install();
}

}  // namespace loco::train
