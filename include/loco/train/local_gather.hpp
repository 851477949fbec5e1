#pragma once
// Gather groups without a network (gather_group.hpp): SoloGather (one member: its own message
// is all there is) and ThreadGather (M members in one process, one thread each, for tests and
// the in-process benchmark). The network's all-gather core is proto/all_gather.hpp.

#include <atomic>
#include <memory>
#include <vector>

#include "loco/train/gather_group.hpp"
#include "loco/train/thread_rounds.hpp"

namespace loco::train {

class SoloGather final : public GatherGroup {
 public:
  RoundResult run_gather(const GatherInput& input) override;
};

// M members, each calling run_gather() from its own thread for the same round (in lock step:
// thread_rounds.hpp). Every member gets the messages in member order. Counts the bytes each
// member contributed.
class ThreadGather {
 public:
  explicit ThreadGather(std::size_t members);
  ~ThreadGather();
  GatherGroup& member(std::size_t index);
  // Total bytes of the messages member `index` contributed so far (what a direct all-gather
  // sends to each of the M − 1 others).
  std::uint64_t bytes_contributed(std::size_t index) const;

 private:
  class Member;
  void arrive(std::size_t index, const GatherInput& input);

  ThreadRounds rounds_;
  std::vector<std::unique_ptr<Member>> members_;
  std::vector<std::vector<std::byte>> parts_;
  std::vector<std::atomic<std::uint64_t>> bytes_;
};

}  // namespace loco::train
