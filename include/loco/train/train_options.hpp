#pragma once
// The options of loco-train: every TrainConfig field as a flag --section.key and a TOML key.

namespace CLI {
class App;
}

namespace loco::train {

struct TrainConfig;

// Registers the options on `app`, bound to the fields of `config` (whose values are the
// defaults shown by --help).
void add_train_options(CLI::App& app, TrainConfig& config);

}  // namespace loco::train
