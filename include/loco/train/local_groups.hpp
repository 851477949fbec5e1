#pragma once
// Groups without a network: SoloGroup (one member: DiLoCo alone is valid, M = 1) and ThreadGroup
// (M workers in one process, one thread each, for tests and quick experiments). The network's
// group, over the tracker and the ring all-reduce, is swarm_group.hpp.

#include <condition_variable>
#include <mutex>
#include <vector>

#include "loco/train/strategy.hpp"

namespace loco::train {

class SoloGroup final : public OuterGroup {
 public:
  RoundResult run_round(const RoundInput& input) override;
};

// M members, each calling run_round() from its own thread for the same round. The mean is summed
// in member order, then divided by M, so every member gets the same bits; each member's tentative
// hash is compared, and a member whose state differs is a broken invariant (asserted).
class ThreadGroup {
 public:
  explicit ThreadGroup(std::size_t members);
  ~ThreadGroup();
  OuterGroup& member(std::size_t index);

 private:
  class Member;
  void arrive(std::size_t index, const RoundInput& input);

  std::size_t size_;
  std::vector<std::unique_ptr<Member>> members_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<float> sum_;
  std::vector<std::vector<float>> deltas_;
  std::size_t arrived_ = 0, hashed_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<Digest> hashes_;
};

}  // namespace loco::train
