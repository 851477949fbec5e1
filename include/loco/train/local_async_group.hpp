#pragma once
// AsyncOuterGroup for M workers in one process (one thread each; M = 1 is loco-train alone).
// Each member encodes its Δ with the run's codec in start_round (the bytes a real group would
// carry) and returns; finish_round waits until every member's message for that round is in, then
// decodes and sums them in member order and divides by M, so every member computes the same bits
// without further coordination, and installs the tentative state at once (no hash: nothing to
// compare in one process). The last member to finish a round frees its messages.
//
// Cost per round of a fragment of S floats and encoded size E (fp4:block=64: E ≈ S/2 + S/64·4
// bytes + 12): each member encodes once and decodes M messages. Over a network the same round as
// a ring all-reduce of encoded chunks sends ≈ 2·E·(M−1)/M bytes per member; bytes_handed_over()
// counts E per round, the figure docs/STRATEGIES.md compares.

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/train/async_outer_group.hpp"

namespace loco::train {

class LocalAsyncGroup {
 public:
  // Throws Error(config) for a bad codec spec.
  LocalAsyncGroup(std::size_t members, std::string_view codec);
  ~LocalAsyncGroup();
  AsyncOuterGroup& member(std::size_t index);

  std::uint64_t bytes_handed_over(std::size_t member) const;  // Σ E over its rounds
  std::uint64_t largest_message() const;                      // max E: the peak per round

 private:
  class Member;
  struct Round {
    std::vector<std::vector<std::byte>> messages;  // by member; empty until it arrives
    std::size_t floats = 0;                        // the fragment's size
    std::size_t arrived = 0, finished = 0;
  };
  void deposit(std::size_t index, AsyncOuterGroup::Handle handle, std::vector<std::byte> message,
               std::size_t floats);
  void collect(AsyncOuterGroup::Handle handle, std::vector<float>& mean);

  std::size_t size_;
  std::unique_ptr<compress::Codec> codec_;
  std::vector<std::unique_ptr<Member>> members_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<AsyncOuterGroup::Handle, Round> rounds_;
  std::vector<std::uint64_t> bytes_;
  std::uint64_t largest_ = 0;
};

}  // namespace loco::train
