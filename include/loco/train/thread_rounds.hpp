#pragma once
// The lock step that ThreadGroup and ThreadGather share: M threads of one process run a round
// together. Each member deposits its contribution; the last to arrive combines them; each member
// then computes its tentative state from what was combined (outside the lock: nothing changes it
// until every hash is in) and reports the hash; once all M hashes are in they must be equal (a
// member that computed another state is a broken invariant, asserted), and every member may
// install. A generation counter lets the same object serve round after round.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "loco/core/hash.hpp"

namespace loco::train {

class ThreadRounds {
 public:
  explicit ThreadRounds(std::size_t members);

  std::size_t size() const { return size_; }

  // Called by member `index` from its own thread. `deposit` runs under the lock; `combine` runs
  // once, under the lock, in the last member to arrive; `tentative` runs outside it. Returns when
  // every member's hash is in: the caller installs then.
  void run(std::size_t index, const std::function<void()>& deposit,
           const std::function<void()>& combine, const std::function<Digest()>& tentative);

 private:
  std::size_t size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t arrived_ = 0, hashed_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<Digest> hashes_;
};

}  // namespace loco::train
