#include "loco/train/thread_rounds.hpp"

#include "loco/core/assert.hpp"

namespace loco::train {

ThreadRounds::ThreadRounds(std::size_t members) : size_(members), hashes_(members) {
  LOCO_ASSERT(members >= 1, "a group has at least one member");
}

void ThreadRounds::run(std::size_t index, const std::function<void()>& deposit,
                       const std::function<void()>& combine,
                       const std::function<Digest()>& tentative) {
  std::unique_lock lock(mutex_);
  const std::uint64_t generation = generation_;
  deposit();
  if (++arrived_ == size_) {
    combine();
    changed_.notify_all();
  } else {
    changed_.wait(lock, [&] { return arrived_ == size_ || generation_ != generation; });
  }
  lock.unlock();
  const Digest hash = tentative();
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
}

}  // namespace loco::train
