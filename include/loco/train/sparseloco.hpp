#pragma once
// SparseLoCo (docs/STRATEGIES.md): DiLoCo's H inner AdamW steps, then a round in which each
// member sends only the chunk-wise top-k of its error-feedback accumulator e ← β·e + Δ, in 2 to
// 8 bits, through an all-gather (GatherGroup, as DeMo's), and every member moves the shared θ by
// outer_lr × the clipped mean of the members' decoded updates. The maths is in
// sparseloco_components.hpp; this is the strategy around it.
//
//   after_step, every H steps: message_i = top-k of (e_i ← β·e_i + θ − θ_i)
//                              all-gather of the messages
//                              θ ← θ − outer_lr·U          (U: the clipped mean, on the shared θ)
//                              e_i ← e_i − sent_i          (only if the round committed)
//                              θ_i ← θ                     (whatever the outcome)
//
// Shared state: θ ("sparseloco.params"), round = rounds taken together. e is this member's own
// (checkpoints carry it as "sparseloco.error", so a resume is bit-exact); a member that joins
// starts with e = 0, at the run's place in the schedule (round × H steps). The inner AdamW
// moments stay local, as DiLoCo's.
//
// Every outcome restarts the local copy from θ: a skipped round (too few members) sent nothing,
// so the phase's Δ stays in e whole and goes out in later rounds; measuring the next Δ from the
// old local copy would count it twice. A replaced round (this member was out of sync) takes the
// fetched θ and keeps e whole, as DeMo keeps δ.
//
// Memory, P parameters, besides the loop's: θ, the tentative θ', e, the sent part, the mean U and
// the aggregate's sum and scratch, 4P bytes each: 28P.
// Cost per round, M members, c values a chunk, k kept, b bits: a message of about
// P·k/c·(2 + b/8) + 4·P/c bytes (16-bit indices, b-bit values, a fp32 scale per chunk: 0.036 bytes
// a parameter at k/c = 64/4096 and b = 2, against 1.02 for DiLoCo's int8), sent to each of the
// M − 1 others by the direct all-gather. Local work: one top-k pass over e, 2M sparse decodes of
// P floats each, a BLAKE2b over θ'.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loco/train/gather_group.hpp"
#include "loco/train/sparseloco_components.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

class SparseLoCo final : public Strategy {
 public:
  static constexpr const char* kParams = "sparseloco.params";
  static constexpr const char* kError = "sparseloco.error";
  static std::vector<std::string> shared_names() { return {kParams}; }

  SparseLoCo(const SparseLoCoConfig& config, const std::shared_ptr<const ArenaLayout>& layout,
             GatherGroup& group);

  void begin(InnerLoop& loop, Start how) override;
  bool on_gradients(InnerLoop&) override { return true; }
  // A round every H steps.
  void after_step(InnerLoop& loop) override;
  SharedState& shared() override { return shared_; }
  std::vector<NamedArena> own_arenas() override { return {{kError, &error_}}; }

  // Runs the round now (after_step does every H steps).
  RoundResult round(InnerLoop& loop);
  // The same round from `local`, a trainer's θ_i that is not an InnerLoop's (the C API's,
  // host/trainer_peer.hpp): `local` holds θ after it, whatever the outcome (the class comment).
  RoundResult round(Arena& local);
  // A member that joins a run past the state it held starts with e = 0 (begin's Start::joined).
  void forget_error() { error_.zero(); }
  const Arena& error() const { return error_; }  // e
  Arena& error() { return error_; }              // a trainer peer's checkpoint writes and reads it
  const RoundResult& last_round() const { return last_; }
  std::size_t last_message_bytes() const { return last_bytes_; }
  std::size_t last_parts_used() const { return last_used_; }
  std::size_t last_parts_clipped() const { return last_clipped_; }

 private:
  // The loop takes θ and the run's place in the schedule.
  void adopt(InnerLoop& loop);
  void install();  // the shared state takes the tentative one

  SparseLoCoConfig config_;
  GatherGroup& group_;
  SparseLoCoComponents components_;
  SharedState shared_;
  SharedState tentative_;
  Arena error_;  // e, this member's own
  Arena sent_;   // what this member's last message decodes to
  Arena mean_;   // U
  RoundResult last_;
  std::size_t last_bytes_ = 0;
  std::size_t last_used_ = 0;
  std::size_t last_clipped_ = 0;
};

}  // namespace loco::train
