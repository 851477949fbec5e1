#pragma once
// What a training process checkpoints and resumes from, for loco-train (trainer.cpp) and
// loco-peer (peer/swarm_peer.cpp) alike: the inner loop's parameters and AdamW moments (if it
// steps with AdamW), the strategy's own arenas (DeMo's momentum) and its shared arenas, the step,
// AdamW's step count, the shared state's round and the data cursor, in one file
// (train_state_file.hpp) that names the run's identity.

#include <filesystem>
#include <string>
#include <vector>

#include "loco/train/inner_loop.hpp"
#include "loco/train/strategy.hpp"
#include "loco/train/train_state_file.hpp"

namespace loco::train {

class TrainingCheckpoint {
 public:
  // `loop` and `strategy` outlive this; `identity`: checkpoint_identity() of the run.
  TrainingCheckpoint(InnerLoop& loop, Strategy& strategy, std::string identity);

  // Puts the file's state into the loop and the strategy and returns the data cursor it saved,
  // for the caller to restore (a peer may have been given another shard since). Throws as
  // load_train_state does.
  std::string load(const std::filesystem::path& path);
  // Writes atomically. Throws Error(io).
  void save(const std::filesystem::path& path) const;

 private:
  InnerLoop& loop_;
  Strategy& strategy_;
  std::string identity_;
  std::vector<NamedArena> arenas_;
};

}  // namespace loco::train
