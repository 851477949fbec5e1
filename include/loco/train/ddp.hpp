#pragma once
// The data-parallel baseline (DDP): every step, the members average their gradients over the
// group (the same OuterGroup, collective and codec choice as DiLoCo; fp32 by default), then take
// one AdamW step on the mean. Every member applies the same mean to the same state, so all hold
// the same parameters and AdamW moments after every step: that trio is the shared state, and its
// round is the number of steps taken together.
//
//   on_gradients: g_i = this member's gradient
//                 ḡ   = (1/M) Σ_i g_i                      (the round: one all-reduce of P values)
//                 θ, m, v ← AdamW(θ, m, v, ḡ, lr(round))   (on the shared copy, then the loop's)
//
// Cost per step, P parameters, M members: the all-reduce of P values (ring: 2(M−1)/M · c·P bytes
// sent per member, 2(M−1) latencies), plus O(P) local work: about ten P-float copies and one
// BLAKE2b over θ ‖ m ‖ v (12·P bytes) for the round's state hash.
//
// A skipped round (too few members) drops the batch: no member steps alone, so the state stays
// the group's. A replaced round (this member was out of sync) takes the fetched state.

#include "loco/optim/adamw.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

class DataParallel final : public Strategy {
 public:
  // Names of the shared arenas (checkpoint prefixes).
  static constexpr const char* kParams = "ddp.params";
  static constexpr const char* kMomentM = "ddp.m";
  static constexpr const char* kMomentV = "ddp.v";
  static std::vector<std::string> shared_names() { return {kParams, kMomentM, kMomentV}; }

  DataParallel(const std::shared_ptr<const ArenaLayout>& layout, const optim::AdamWConfig& adamw,
               OuterGroup& group);

  void begin(InnerLoop& loop, Start how) override;
  // Runs the round and the AdamW step itself: returns false.
  bool on_gradients(InnerLoop& loop) override;
  void after_step(InnerLoop&) override {}
  SharedState& shared() override { return shared_; }

  const RoundResult& last_round() const { return last_; }

 private:
  // The loop takes the shared state: parameters, moments and the step count (= round).
  void adopt(InnerLoop& loop);

  OuterGroup& group_;
  SharedState shared_;
  SharedState tentative_;  // the state the last mean leads to, until installed
  optim::AdamW next_;      // steps tentative_ (its own moments, copied in and out)
  Arena mean_;             // the group's mean gradient
  RoundResult last_;
};

}  // namespace loco::train
