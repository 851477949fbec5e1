#include "loco/train/model_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "loco/checkpoint/arena_tensors.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/error.hpp"

namespace loco::train {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCategory::io, fmt::format("cannot read {}", path.string()));
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

ModelFile model_file(const SharedState& state, const Digest& state_hash, const std::string& run_id,
                     const std::filesystem::path& run_config) {
  std::vector<checkpoint::TensorRef> tensors;
  const Arena& parameters = state.arena(0);  // θ; the others (outer momentum, ...) stay behind
  checkpoint::append_arena(tensors, parameters, "");
  const std::string round = std::to_string(state.round());
  return ModelFile{.round = state.round(),
                   .state_hash = to_hex(state_hash),
                   .parameters = parameters.layout().parameter_count(),
                   .bytes = checkpoint::safetensors_bytes(
                       tensors,
                       checkpoint::Metadata{{"loco.run_id", run_id},
                                            {"loco.round", round},
                                            {"loco.state_hash", to_hex(state_hash)},
                                            {"loco.run_config", read_text(run_config)}},
                       "the model of round " + round)};
}

}  // namespace loco::train
