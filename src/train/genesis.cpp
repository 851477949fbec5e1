#include "loco/train/genesis.hpp"

#include "loco/model/gpt.hpp"
#include "loco/model/mlp.hpp"
#include "loco/train/ddp.hpp"
#include "loco/train/demo.hpp"
#include "loco/train/diloco.hpp"
#include "loco/train/init_params.hpp"
#include "loco/train/make_demo.hpp"
#include "loco/train/make_streaming.hpp"
#include "loco/train/streaming_diloco.hpp"

namespace loco::train {

std::unique_ptr<model::Model> make_model(const TrainConfig& config) {
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
  const std::string& kind = config.strategy.kind;
  if (kind == "diloco") return DiLoCo::shared_names();
  if (kind == "ddp") return DataParallel::shared_names();
  if (kind == "streaming")
    return StreamingDiLoCo::shared_names(streaming_config(config.strategy).eager);
  if (kind == "demo") return DeMo::shared_names(demo_config(config));
  return {};
}

SharedState genesis_state(const TrainConfig& config) {
  const std::unique_ptr<model::Model> model = make_model(config);
  SharedState state(model->layout(), shared_state_names(config));
  if (!state.parts().empty()) initial_parameters(config, *model, state.arena(0));
  return state;
}

}  // namespace loco::train
