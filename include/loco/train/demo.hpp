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
//   late over an OverlappedGather (the swarm's, overlapped_gather.hpp): θ' = θ·(1 − lr·wd) −
//                 lr·pending does not depend on the parts, so on_gradients computes it, hands
//                 the message over and returns: step t + 1 computes at θ' while step t's
//                 all-gather runs; the group computes pending' = sign(mean) and the state's hash
//                 on its thread. The next on_gradients (or finish) lands the round first. The
//                 gradients are taken at the same points as the blocking late variant's: the
//                 same states, bit for bit, as long as the same members take part.
//
// Shared state: θ ("demo.params"; with late also "demo.pending"), round = steps taken together.
// δ is this member's own, not shared: an arena of its own (the loop allocates no AdamW moments
// under DeMo), which checkpoints carry as "demo.momentum", so a resume is bit-exact. A member that
// joins starts with δ = 0.
// Memory, P parameters, besides the loop's θ and gradient: δ, the shared θ and the tentative θ
// (with late, the pending and tentative pending directions), this member's sent components and
// the direction, 4P bytes each: 20P (28P with late; overlapped, 8P more in the group: the copy of
// θ' ‖ pending' it serves from the commit on, made once a step).
//
// Cost per step, P parameters, M members, c = chunk elements, k kept: each member's message is
// about P·k/c·(2 + value bytes) bytes (sign: 2 bytes of index + 1 bit per kept value, plus 4
// bytes per chunk); a direct all-gather sends it to M − 1 members. Local work: one chunked DCT
// of δ, M + 1 inverse DCTs (own message and every member's), a BLAKE2b over θ.
//
// A skipped round (too few members) drops the batch's update and keeps δ whole (nothing was
// sent); a replaced round (this member was out of sync) takes the fetched θ. Overlapped, the
// step computed meanwhile (at θ', which a skipped round did not install) still contributes to
// the next round: a message is a member's claim, whatever θ its gradient was taken at.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "loco/train/demo_components.hpp"
#include "loco/train/gather_group.hpp"
#include "loco/train/overlapped_gather.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

class DeMo final : public Strategy {
 public:
  static constexpr const char* kParams = "demo.params";
  static constexpr const char* kPending = "demo.pending";
  static constexpr const char* kMomentum = "demo.momentum";
  // θ, and the update a delayed step has pending.
  static std::vector<std::string> shared_names(const DemoConfig& config);

  // With `overlapped` (taken only with config.late) the rounds overlap the next step.
  DeMo(const DemoConfig& config, const std::shared_ptr<const ArenaLayout>& layout,
       GatherGroup& group, OverlappedGather* overlapped = nullptr);

  void begin(InnerLoop& loop, Start how) override;
  // Runs the step itself: returns false.
  bool on_gradients(InnerLoop& loop) override;
  void after_step(InnerLoop&) override {}
  // Lands the overlapped round still in flight.
  void finish(InnerLoop& loop) override;
  SharedState& shared() override { return shared_; }
  std::vector<NamedArena> own_arenas() override { return {{kMomentum, &momentum_}}; }
  const Arena& momentum() const { return momentum_; }  // δ

  const RoundResult& last_round() const { return last_; }
  std::size_t last_message_bytes() const { return last_bytes_; }
  // Members whose parts went into the last mean (overlapped: of the last round landed; the
  // group's thread writes it before the round ends).
  std::size_t last_parts_used() const { return last_used_; }

 private:
  // The loop takes θ and the step count (= round).
  void adopt(InnerLoop& loop);
  // This step's message (δ folds the gradient in), and with late the tentative θ' (whatever the
  // parts: θ·(1 − lr·wd) − lr·pending) and the tentative round.
  std::vector<std::byte> prepare(InnerLoop& loop, float lr);
  void blocking_step(InnerLoop& loop);
  // Overlapped: lands the round in flight, then starts the next from this step's gradients.
  void land(InnerLoop& loop);
  void start(InnerLoop& loop);
  // The shared state `parts` lead to, into tentative_ (with late, tentative_'s θ is set first).
  proto::StateManifest tentative_of(std::span<const std::vector<std::byte>> parts, float lr);
  void install();  // the shared state takes the tentative one

  DemoConfig config_;
  GatherGroup& group_;
  OverlappedGather* overlapped_;  // null: blocking rounds
  bool in_flight_ = false;        // an overlapped round started and not landed
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
