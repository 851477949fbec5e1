#pragma once
// The run's model out of the tracker's custody copies (docs/TRACKER.md, "The trained model"): the
// model file of train/model_file.hpp (the one writer `loco-peer fetch-model` shares). The copy is
// checked against its state hash and loaded into the run config's own state layout, so a copy of
// another run or model is refused, never reshaped. `loco-tracker export` writes it to a file; the
// status page's link serves the newest copy's (model_download.hpp).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/train/model_file.hpp"
#include "tracker/model_download.hpp"
#include "tracker_options.hpp"

namespace loco::tracker {

struct ExportOptions {
  std::string out;                     // the safetensors file to write
  std::optional<std::uint64_t> round;  // none: the newest copy held
};

using ExportedModel = train::ModelFile;

// The model file of the copy of `round` whose state is `state` and hash `state_hash`. Throws
// Error(format) when it is not a state of the run config's model or does not hash to it.
ExportedModel model_file(const TrackerOptions& tracker, std::uint64_t round,
                         std::span<const std::byte> state, const Digest& state_hash);

// loco-tracker export: the copy of options.round (or the newest) from the custody folder next to
// the state file, written to options.out. Throws Error naming what is missing (the state file, a
// custody copy of that round) or wrong.
ExportedModel export_model(const TrackerOptions& tracker, const ExportOptions& options);

// A custody copy the tracker holds in memory (TrackerCore::custody() and custody_state()).
struct HeldCopy {
  std::uint64_t round = 0;
  Digest state_hash{};
  std::shared_ptr<const std::vector<std::byte>> state;
};

// The status page's model (model_download.hpp): the model file of the copy `held` gives, built
// once per copy (the copy is checked as export checks it; a copy that fails throws, for a 500).
ModelSource model_source(TrackerOptions tracker, std::function<std::optional<HeldCopy>()> held);

}  // namespace loco::tracker
