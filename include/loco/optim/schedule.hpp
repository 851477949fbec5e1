#pragma once
// Learning-rate schedule: linear warmup to max_lr, then cosine decay to min_lr at total_steps,
// and min_lr after that.
//   step < warmup:          lr = max_lr · (step + 1) / warmup
//   warmup ≤ step < total:  lr = min_lr + ½(max_lr − min_lr)(1 + cos(π · (step − warmup) / (total −
//   warmup)))

#include <cstdint>

namespace loco::optim {

struct LrSchedule {
  float max_lr = 6e-4f;
  float min_lr = 6e-5f;
  std::uint64_t warmup_steps = 100;
  std::uint64_t total_steps = 1000;

  void validate() const;  // throws Error(config)
  float at(std::uint64_t step) const;
};

}  // namespace loco::optim
