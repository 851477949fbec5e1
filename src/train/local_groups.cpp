#include "loco/train/local_groups.hpp"

#include "loco/core/assert.hpp"

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
    return RoundResult{.kind = RoundResult::Kind::committed, .members = group_.size_};
  }

 private:
  ThreadGroup& group_;
  std::size_t index_;
};

ThreadGroup::ThreadGroup(std::size_t members) : size_(members), deltas_(members), hashes_(members) {
  for (std::size_t i = 0; i < members; ++i) members_.push_back(std::make_unique<Member>(*this, i));
}

ThreadGroup::~ThreadGroup() = default;

OuterGroup& ThreadGroup::member(std::size_t index) {
  return *members_.at(index);
}

// Two barriers: every delta in (then the mean, summed in member order), every hash in (then
// install). The generation counter lets the same object serve round after round.
void ThreadGroup::arrive(std::size_t index, const RoundInput& input) {
  std::unique_lock lock(mutex_);
  const std::uint64_t generation = generation_;
  deltas_[index].assign(input.delta.begin(), input.delta.end());
  if (++arrived_ == size_) {
    sum_.assign(input.delta.size(), 0.0f);
    for (const auto& d : deltas_)
      for (std::size_t i = 0; i < d.size(); ++i) sum_[i] = sum_[i] + d[i];
    const auto m = static_cast<float>(size_);
    for (float& v : sum_) v = v / m;
    changed_.notify_all();
  } else {
    changed_.wait(lock, [&] { return arrived_ == size_ || generation_ != generation; });
  }
  lock.unlock();
  const Digest hash = input.tentative(sum_);  // sum_ is stable until every hash is in
  lock.lock();
  hashes_[index] = hash;
  if (++hashed_ == size_) {
    for (const Digest& h : hashes_)
      LOCO_ASSERT(h == hashes_[0], "members of a thread group computed different states");
    arrived_ = 0;
    hashed_ = 0;
    ++generation_;
    changed_.notify_all();
  } else {
    changed_.wait(lock, [&] { return generation_ != generation; });
  }
  lock.unlock();
  input.install();
}

}  // namespace loco::train
