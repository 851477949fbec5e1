#pragma once
// The run's model as one safetensors file PyTorch loads as is (docs/FORMATS.md): the parameters θ
// (the shared state's first part) of one committed round under nanoGPT's names, with the run id,
// the round, the state hash and the run's loco-train config in its metadata. One writer for every
// way out of a run: `loco-tracker export` and the status page's link (a custody copy), and
// `loco-peer fetch-model` (a state fetched from the peers that hold it). The same state, run id and
// run config file give the same bytes, so a file from any of them can be checked against another's
// BLAKE2b (the status page's ETag).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/train/shared_state.hpp"

namespace loco::train {

struct ModelFile {
  std::uint64_t round = 0;
  std::string state_hash;  // hex
  std::size_t parameters = 0;
  std::vector<std::byte> bytes;  // the safetensors file
};

// The model file of `state`, whose hash is `state_hash` (the caller has checked it: a custody
// copy's manifest, a fetch against the committed hash), in run `run_id` whose loco-train config
// is the file `run_config` (its text goes into the metadata as it is). Throws Error(io) when the
// config cannot be read. One copy of θ (the file's bytes); the state is read, not changed.
ModelFile model_file(const SharedState& state, const Digest& state_hash, const std::string& run_id,
                     const std::filesystem::path& run_config);

}  // namespace loco::train
