#include "model_export.hpp"

#include <fmt/format.h>

#include <cctype>
#include <vector>

#include "custody_store.hpp"
#include "loco/checkpoint/atomic_file.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/train/genesis.hpp"

namespace loco::tracker {

ExportedModel model_file(const TrackerOptions& tracker, std::uint64_t round,
                         std::span<const std::byte> state_bytes, const Digest& state_hash) {
  // The run's own layout: a copy of another model does not fit it and is refused by load().
  const train::TrainConfig run = cli::load_train_config(tracker.run_config);
  train::SharedState state = train::genesis_state(run);
  try {
    state.load(round, state_bytes);
  } catch (const Error& e) {
    throw Error(ErrorCategory::format,
                fmt::format("the custody copy of round {} is not a state of the model of {} ({})",
                            round, tracker.run_config, e.message()));
  }
  const Digest hash = state.hash();
  if (hash != state_hash)
    throw Error(ErrorCategory::format,
                fmt::format("the custody copy of round {} does not hash to its manifest's state "
                            "under this run's config",
                            round));
  return train::model_file(state, hash, tracker.run_id, tracker.run_config);
}

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
  ExportedModel model = model_file(tracker, round, copy.state, copy.manifest.state_hash());
  const std::span<const std::byte> parts[] = {model.bytes};
  checkpoint::write_file_atomically(options.out, parts);
  return model;
}

ModelSource model_source(TrackerOptions tracker, std::function<std::optional<HeldCopy>()> held) {
  // A file name the browser saves: the run id's letters, digits, '.', '-' and '_' only.
  std::string name = tracker.run_id;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  std::shared_ptr<const ModelDownload> built;
  return [tracker = std::move(tracker), held = std::move(held), name,
          built]() mutable -> std::shared_ptr<const ModelDownload> {
    const std::optional<HeldCopy> copy = held();
    if (!copy || !copy->state) return nullptr;
    if (!built || built->round != copy->round) {
      const ExportedModel model = model_file(tracker, copy->round, *copy->state, copy->state_hash);
      built = std::make_shared<const ModelDownload>(ModelDownload{
          .round = copy->round,
          .filename = fmt::format("{}-round-{}.safetensors", name, copy->round),
          .bytes =
              std::string(reinterpret_cast<const char*>(model.bytes.data()), model.bytes.size()),
          .file_hash = to_hex(blake2b(model.bytes))});
    }
    return built;
  };
}

}  // namespace loco::tracker
