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
    return RoundResult{.kind = RoundResult::Kind::committed, .members = group_.rounds_.size()};
  }

 private:
  ThreadGather& group_;
  std::size_t index_;
};

ThreadGather::ThreadGather(std::size_t members)
    : rounds_(members), parts_(members), bytes_(members) {
  for (std::size_t i = 0; i < members; ++i) members_.push_back(std::make_unique<Member>(*this, i));
}

ThreadGather::~ThreadGather() = default;

GatherGroup& ThreadGather::member(std::size_t index) {
  return *members_.at(index);
}

std::uint64_t ThreadGather::bytes_contributed(std::size_t index) const {
  return bytes_.at(index).load();
}

void ThreadGather::arrive(std::size_t index, const GatherInput& input) {
  rounds_.run(
      index,
      [&] {
        parts_[index].assign(input.contribution.begin(), input.contribution.end());
        bytes_[index] += input.contribution.size();
      },
      [] {}, [&] { return input.tentative(parts_).state_hash(); });
  input.install();
}

}  // namespace loco::train
