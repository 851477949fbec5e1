#pragma once
// loco-tracker export: the run's model out of the tracker's custody copies (docs/TRACKER.md,
// "The trained model"), as a safetensors file PyTorch loads as is: the parameters θ of one
// committed round under nanoGPT's names, with the run id, the round, the state hash and the run's
// loco-train config in its metadata. The copy is checked against its manifest and loaded into the
// run config's own state layout, so a file of another run or model is refused, never reshaped.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "tracker_options.hpp"

namespace loco::tracker {

struct ExportOptions {
  std::string out;                     // the safetensors file to write
  std::optional<std::uint64_t> round;  // none: the newest copy held
};

struct ExportedModel {
  std::uint64_t round = 0;
  std::string state_hash;  // hex
  std::size_t parameters = 0;
};

// Throws Error naming what is missing (the state file, a custody copy of that round) or wrong.
ExportedModel export_model(const TrackerOptions& tracker, const ExportOptions& options);

}  // namespace loco::tracker
