#include "loco/train/genesis.hpp"

#include "loco/core/error.hpp"
#include "loco/model/gpt.hpp"
#include "loco/model/mlp.hpp"
#include "loco/train/genesis_file.hpp"
#include "loco/train/init_params.hpp"
#include "loco/train/strategy_kinds.hpp"

namespace loco::train {

void require_own_model(const TrainConfig& config) {
  if (config.model.external())
    throw Error(ErrorCategory::config,
                "model.kind = \"external\": an external model needs a trainer peer: the C API or "
                "the Python package (docs/PYTORCH.md); loco-train and loco-peer train loco's own "
                "models only (kind = \"gpt\" or \"mlp\")");
}

std::unique_ptr<model::Model> make_model(const TrainConfig& config) {
  require_own_model(config);
  const model::GptConfig& g = config.model.gpt;
  if (config.model.kind == "mlp") {
    return std::make_unique<model::Mlp>(
        model::MlpConfig{g.vocab, config.model.mlp_embed, config.model.mlp_hidden, g.context},
        config.train.batch);
  }
  return std::make_unique<model::Gpt>(g, config.train.batch);
}

void initial_parameters(const TrainConfig& config, const model::Model& model, Arena& params) {
  if (config.train.init.empty()) {
    model.init(params, config.train.seed);
  } else {
    load_init_params(config.train.init, params);
  }
}

std::vector<std::string> shared_state_names(const TrainConfig& config) {
  return strategy_row(config.strategy.kind).shared_names(config);
}

SharedState genesis_state(const TrainConfig& config) {
  if (config.model.external()) {
    Genesis genesis = read_genesis(config.model.genesis, config.model.genesis_blake2b);
    SharedState state(genesis.layout, shared_state_names(config));
    if (!state.parts().empty()) state.arena(0) = std::move(genesis.params);
    return state;
  }
  const std::unique_ptr<model::Model> model = make_model(config);
  SharedState state(model->layout(), shared_state_names(config));
  if (!state.parts().empty()) initial_parameters(config, *model, state.arena(0));
  return state;
}

std::string write_model_genesis(const TrainConfig& config, const std::filesystem::path& path) {
  const std::unique_ptr<model::Model> model = make_model(config);
  Arena params(model->layout());
  initial_parameters(config, *model, params);
  std::vector<GenesisTensor> tensors;
  for (std::size_t i = 0; i < params.layout().tensor_count(); ++i)
    tensors.push_back({.name = params.layout().tensor(i).name,
                       .shape = params.layout().tensor(i).shape,
                       .data = params.tensor(i).data()});
  return write_genesis(path, tensors);
}

}  // namespace loco::train
