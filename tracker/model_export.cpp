#include "model_export.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "custody_store.hpp"
#include "loco/checkpoint/arena_tensors.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/train/genesis.hpp"

namespace loco::tracker {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCategory::io, fmt::format("cannot read {}", path.string()));
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

ExportedModel export_model(const TrackerOptions& tracker, const ExportOptions& options) {
  if (tracker.run_id.empty() || tracker.run_config.empty())
    throw Error(ErrorCategory::config,
                "export needs the run's --run.id and --run.config (give the tracker's --config)");
  const std::filesystem::path folder = tracker.state_file + ".custody";
  if (tracker.state_file.empty() || !std::filesystem::is_directory(folder))
    throw Error(ErrorCategory::config,
                fmt::format("no custody folder {}: export reads the copies next to the tracker's "
                            "--tracker.state-file (give the tracker's --config)",
                            folder.string()));
  const CustodyStore store(folder, tracker.run_id, to_custody_limits(tracker));
  if (store.entries().empty())
    throw Error(ErrorCategory::config,
                fmt::format("no custody copy of run '{}' in {}: the tracker keeps one every "
                            "--tracker.custody-every rounds",
                            tracker.run_id, store.folder().string()));
  const std::uint64_t round = options.round.value_or(store.entries().back().round);
  const proto::CustodyFile copy = store.read(round);

  // The run's own layout: a copy of another model does not fit it and is refused by load().
  const train::TrainConfig run = cli::load_train_config(tracker.run_config);
  train::SharedState state = train::genesis_state(run);
  try {
    state.load(copy.manifest.round, copy.state);
  } catch (const Error& e) {
    throw Error(ErrorCategory::format,
                fmt::format("the custody copy of round {} is not a state of the model of {} ({})",
                            round, tracker.run_config, e.message()));
  }
  const Digest hash = state.hash();
  if (hash != copy.manifest.state_hash())
    throw Error(ErrorCategory::format,
                fmt::format("the custody copy of round {} does not hash to its manifest's state "
                            "under this run's config",
                            round));

  std::vector<checkpoint::TensorRef> tensors;
  const Arena& parameters = state.arena(0);  // θ; the others (outer momentum, ...) stay behind
  checkpoint::append_arena(tensors, parameters, "");
  checkpoint::write_safetensors(
      options.out, tensors,
      checkpoint::Metadata{{"loco.run_id", tracker.run_id},
                           {"loco.round", std::to_string(round)},
                           {"loco.state_hash", to_hex(hash)},
                           {"loco.run_config", read_text(tracker.run_config)}});
  return ExportedModel{.round = round,
                       .state_hash = to_hex(hash),
                       .parameters = parameters.layout().parameter_count()};
}

}  // namespace loco::tracker
