#include "loco/train/run_settings.hpp"

#include <fmt/format.h>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "loco/train/init_params.hpp"
#include "loco/train/strategy_kinds.hpp"

namespace loco::train {

std::vector<proto::Setting> run_settings(const TrainConfig& config) {
  const model::GptConfig& g = config.model.gpt;
  std::vector<proto::Setting> s = {{"model.kind", config.model.kind}};
  if (config.model.external()) {  // the file by its bytes: each peer checks its copy against it
    s.push_back({"model.genesis-blake2b", config.model.genesis_blake2b});
  } else {
    s.push_back({"model.vocab", std::to_string(g.vocab)});
    s.push_back({"model.context", std::to_string(g.context)});
    if (config.model.kind == "gpt") {
      s.push_back({"model.n-layer", std::to_string(g.n_layer)});
      s.push_back({"model.n-head", std::to_string(g.n_head)});
      s.push_back({"model.d-model", std::to_string(g.d_model)});
    } else {
      s.push_back({"model.mlp-embed", std::to_string(config.model.mlp_embed)});
      s.push_back({"model.mlp-hidden", std::to_string(config.model.mlp_hidden)});
    }
  }
  s.push_back({"train.seed", std::to_string(config.train.seed)});
  if (!config.train.init.empty()) {  // the file's bytes, not its path: peers keep it anywhere
    s.push_back({"train.init-blake2b", init_file_digest(config.train.init)});
  }
  s.push_back({"data.source", config.data.source});
  if (config.data.source == "markov") {
    const data::MarkovConfig& m = config.data.markov;
    s.push_back({"data.markov-order", std::to_string(m.order)});
    s.push_back({"data.markov-successors", std::to_string(m.successors)});
    s.push_back({"data.markov-uniform-mix", fmt::format("{}", m.uniform_mix)});
    s.push_back({"data.markov-seed", std::to_string(m.seed)});
  }
  // The manifest names every shard and the tokenizer model by hash: one setting fixes them all.
  if (config.data.source == "dataset")
    s.push_back({"data.manifest-hash", config.data.manifest_hash});
  s.push_back({"strategy.kind", config.strategy.kind});
  strategy_row(config.strategy.kind).settings(config, s);
  return s;
}

void add_codec_setting(const TrainConfig& config, std::vector<proto::Setting>& settings) {
  settings.push_back(
      {"strategy.codec", compress::make_codec(config.strategy.codec_spec())->spec()});
}

void add_all_reduce_setting(const TrainConfig& config, std::vector<proto::Setting>& settings) {
  settings.push_back({"strategy.all-reduce", config.strategy.all_reduce});
}

}  // namespace loco::train
