#pragma once
// DeMo, decoupled momentum (docs/DESIGN.md §1.4): every step a member folds its gradient into its
// own momentum δ, sends only the top-k DCT components of δ per chunk (removing them from δ), and
// every member applies the sign of the members' mean to the shared parameters. The maths is in
// demo_components.hpp; this is the strategy around it.
//
//   on_gradients: message_i = components of δ_i         (δ_i: this member's, never sent whole)
//                 all-gather of the messages            (GatherGroup: one round per step)
//                 θ ← θ·(1 − lr·wd) − lr·sign(mean)     (on the shared copy, then the loop's)
//                 δ_i ← δ_i − sent_i                     (only if the round committed)
//   with `late`:  θ ← θ·(1 − lr·wd) − lr·pending; pending ← sign(mean)
//                 (the direction lands one step later, so a gather can overlap the next step)
//
// Shared state: θ ("demo.params"; with late also "demo.pending"), round = steps taken together.
// δ is this member's own, not shared: an arena of its own (the loop allocates no AdamW moments
// under DeMo), which checkpoints carry as "demo.momentum", so a resume is bit-exact. A member that
// joins starts with δ = 0.
// Memory, P parameters, besides the loop's θ and gradient: δ, the shared θ and the tentative θ
// (with late, the pending and tentative pending directions), this member's sent components and
// the direction, 4P bytes each: 20P (28P with late).
//
// Cost per step, P parameters, M members, c = chunk elements, k kept: each member's message is
// about P·k/c·(2 + value bytes) bytes (sign: 2 bytes of index + 1 bit per kept value, plus 4
// bytes per chunk); a direct all-gather sends it to M − 1 members. Local work: one chunked DCT
// of δ, M + 1 inverse DCTs (own message and every member's), a BLAKE2b over θ.
//
// A skipped round (too few members) drops the batch's update and keeps δ whole (nothing was
// sent); a replaced round (this member was out of sync) takes the fetched θ.

#include "loco/train/demo_components.hpp"
#include "loco/train/gather_group.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

class DeMo final : public Strategy {
 public:
  static constexpr const char* kParams = "demo.params";
  static constexpr const char* kPending = "demo.pending";
  static constexpr const char* kMomentum = "demo.momentum";
  // θ, and the update a delayed step has pending.
  static std::vector<std::string> shared_names(const DemoConfig& config);

  DeMo(const DemoConfig& config, const std::shared_ptr<const ArenaLayout>& layout,
       GatherGroup& group);

  void begin(InnerLoop& loop, Start how) override;
  // Runs the step itself: returns false.
  bool on_gradients(InnerLoop& loop) override;
  void after_step(InnerLoop&) override {}
  SharedState& shared() override { return shared_; }
  std::vector<NamedArena> own_arenas() override { return {{kMomentum, &momentum_}}; }
  const Arena& momentum() const { return momentum_; }  // δ

  const RoundResult& last_round() const { return last_; }
  std::size_t last_message_bytes() const { return last_bytes_; }
  // Members whose parts went into the last mean.
  std::size_t last_parts_used() const { return last_used_; }

 private:
  // The loop takes θ and the step count (= round).
  void adopt(InnerLoop& loop);

  DemoConfig config_;
  GatherGroup& group_;
  DemoComponents components_;
  SharedState shared_;
  SharedState tentative_;
  Arena momentum_;   // δ, this member's own
  Arena sent_;       // what this member's message decodes to
  Arena direction_;  // sign of the mean
  RoundResult last_;
  std::size_t last_bytes_ = 0;
  std::size_t last_used_ = 0;
};

}  // namespace loco::train
