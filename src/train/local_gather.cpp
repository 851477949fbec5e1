#include "loco/train/local_gather.hpp"

#include "loco/core/assert.hpp"

namespace loco::train {

RoundResult SoloGather::run_gather(const GatherInput& input) {
  const std::vector<std::vector<std::byte>> parts = {
      {input.contribution.begin(), input.contribution.end()}};
  input.tentative(parts);
  input.install();
  return RoundResult{.kind = RoundResult::Kind::committed, .members = 1};
}

class ThreadGather::Member final : public GatherGroup {
 public:
  Member(ThreadGather& group, std::size_t index) : group_(group), index_(index) {}
  RoundResult run_gather(const GatherInput& input) override {
    group_.arrive(index_, input);
    return RoundResult{.kind = RoundResult::Kind::committed, .members = group_.size_};
  }

 private:
  ThreadGather& group_;
  std::size_t index_;
};

ThreadGather::ThreadGather(std::size_t members)
    : size_(members), parts_(members), bytes_(members, 0), hashes_(members) {
  for (std::size_t i = 0; i < members; ++i) members_.push_back(std::make_unique<Member>(*this, i));
}

ThreadGather::~ThreadGather() = default;

GatherGroup& ThreadGather::member(std::size_t index) {
  return *members_.at(index);
}

std::uint64_t ThreadGather::bytes_contributed(std::size_t index) const {
  std::lock_guard lock(mutex_);
  return bytes_.at(index);
}

// Two barriers, as ThreadGroup: every message in, then every hash in (then install). parts_ is
// stable between them, so each member reads it without the lock.
void ThreadGather::arrive(std::size_t index, const GatherInput& input) {
  std::unique_lock lock(mutex_);
  const std::uint64_t generation = generation_;
  parts_[index].assign(input.contribution.begin(), input.contribution.end());
  bytes_[index] += input.contribution.size();
  if (++arrived_ == size_) {
    changed_.notify_all();
  } else {
    changed_.wait(lock, [&] { return arrived_ == size_ || generation_ != generation; });
  }
  lock.unlock();
  const Digest hash = input.tentative(parts_);
  lock.lock();
  hashes_[index] = hash;
  if (++hashed_ == size_) {
    for (const Digest& h : hashes_)
      LOCO_ASSERT(h == hashes_[0], "members of a thread gather computed different states");
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
