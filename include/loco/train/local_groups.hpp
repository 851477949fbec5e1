#pragma once
// Groups without a network: SoloGroup (one member: DiLoCo alone is valid, M = 1) and ThreadGroup
// (M workers in one process, one thread each, for tests and quick experiments). The network's
// group, over the tracker and the ring all-reduce, is swarm_group.hpp.

#include <memory>
#include <vector>

#include "loco/train/strategy.hpp"
#include "loco/train/thread_rounds.hpp"

namespace loco::train {

class SoloGroup final : public OuterGroup {
 public:
  RoundResult run_round(const RoundInput& input) override;
};

// M members, each calling run_round() from its own thread for the same round (in lock step:
// thread_rounds.hpp). The mean is summed in member order, then divided by M, so every member gets
// the same bits. With a disagreement block (> 0), the mean is then scaled block by block by how
// much the members' Δ disagree (disagreement_scale.hpp): an experiment, DiLoCo's rounds only.
class ThreadGroup {
 public:
  explicit ThreadGroup(std::size_t members, std::size_t disagreement_block = 0);
  ~ThreadGroup();
  OuterGroup& member(std::size_t index);

 private:
  class Member;
  void arrive(std::size_t index, const RoundInput& input);

  ThreadRounds rounds_;
  std::vector<std::unique_ptr<Member>> members_;
  std::size_t disagreement_block_;
  std::vector<std::vector<float>> deltas_;
  std::vector<float> sum_;
};

}  // namespace loco::train
