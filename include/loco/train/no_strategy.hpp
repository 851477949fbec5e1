#pragma once
// Plain local training: AdamW every step, nothing shared (loco-train's default).

#include "loco/train/strategy.hpp"

namespace loco::train {

class NoStrategy final : public Strategy {
 public:
  void begin(InnerLoop&, Start) override {}
  bool on_gradients(InnerLoop&) override { return true; }
  void after_step(InnerLoop&) override {}
  SharedState& shared() override { return none_; }

 private:
  SharedState none_;
};

}  // namespace loco::train
