#pragma once
// The options of loco-train: every TrainConfig field as a flag --section.key and a TOML key, and
// the reader of a run config file that loco-peer and loco-tracker share.

#include <filesystem>

namespace CLI {
class App;
}

namespace loco::train {
struct TrainConfig;
}

namespace loco::cli {

// Registers the options on `app`, bound to the fields of `config` (whose values are the
// defaults shown by --help).
void add_train_options(CLI::App& app, train::TrainConfig& config);

// Reads a loco-train config file (TOML, as `loco-train --config FILE` takes it) into a
// TrainConfig and validates it. Throws Error(config) naming the file and the problem.
train::TrainConfig load_train_config(const std::filesystem::path& path);

}  // namespace loco::cli
