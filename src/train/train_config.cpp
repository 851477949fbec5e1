#include "loco/train/train_config.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/train/strategy_kinds.hpp"

namespace loco::train {

namespace {

[[noreturn]] void config_fail(const std::string& what) {
  throw Error(ErrorCategory::config, what);
}

bool is_lower_hex(const std::string& text, std::size_t digits) {
  return text.size() == digits && std::ranges::all_of(text, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// [model], and what an external model rules out elsewhere.
void validate_model(const TrainConfig& c) {
  const ModelSection& model = c.model;
  if (model.kind != "gpt" && model.kind != "mlp" && !model.external()) {
    config_fail("model.kind must be 'gpt', 'mlp' or 'external', not '" + model.kind + "'");
  }
  if (!model.external()) {
    if (!model.genesis.empty() || !model.genesis_blake2b.empty())
      config_fail(
          "model.genesis, model.genesis-blake2b: a genesis file describes a model of kind = "
          "\"external\"; model.kind is '" +
          model.kind + "'");
  } else {
    if (model.genesis.empty())
      config_fail(
          "model.genesis: an external model's tensors and initial values come from its genesis "
          "file (write it with loco.write_genesis, loco_write_genesis or loco-train "
          "--write-genesis)");
    if (!is_lower_hex(model.genesis_blake2b, 64))
      config_fail(
          "model.genesis-blake2b must be the genesis file's BLAKE2b-256, 64 lowercase hex digits "
          "(write_genesis prints it), not '" +
          model.genesis_blake2b + "'");
    if (!c.train.init.empty())
      config_fail("train.init: an external model's initial values are its genesis file's");
  }
  model.gpt.validate();
  if (model.gpt.vocab > 65536) config_fail("model.vocab must be at most 65536 (tokens are uint16)");
  if (model.kind == "mlp") {
    model::MlpConfig{model.gpt.vocab, model.mlp_embed, model.mlp_hidden, model.gpt.context}
        .validate();
  }
}

void validate_data(const DataSection& data) {
  if (data.shard.count < 1 || data.shard.index >= data.shard.count) {
    config_fail("data.shard-index must be below data.shard-count (at least 1)");
  }
  if (data.source == "dataset") {
    const bool hex = data.manifest_hash.size() == 64 &&
                     data.manifest_hash.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex)
      config_fail(
          "data.manifest-hash must be the manifest's BLAKE2b-256, 64 lowercase hex digits "
          "(loco-prepare --out-dir prints it)");
  }
}

}  // namespace

void TrainConfig::validate() const {
  validate_model(*this);
  if (!model.external()) {  // an external model's trainer has its own optimizer: [optim] unused
    adamw.validate();
    optim::LrSchedule schedule = lr;
    schedule.total_steps = train.steps;
    schedule.validate();
  }
  if (train.steps < 1) config_fail("train.steps must be at least 1");
  if (train.batch < 1 || train.batch > 65536) config_fail("train.batch must be in [1, 65536]");
  if (train.log_every < 1) config_fail("train.log-every must be at least 1");
  if (train.eval_windows < 1 || train.eval_windows > 1'000'000)
    config_fail("train.eval-windows must be in [1, 1000000]");
  if (train.threads < 1 || train.threads > 1024) config_fail("train.threads must be in [1, 1024]");
  validate_data(data);
  const StrategyRow& row = strategy_row(strategy.kind);  // names the known kinds
  row.validate(*this);
  // DiLoCo's round options, refused for a strategy whose rounds do not take them.
  const std::string takes_them = strategy_names(&StrategyRow::diloco_round_options, '"');
  if (!(strategy.round_seconds >= 0 && strategy.round_seconds <= 86'400))
    config_fail("strategy.round-seconds must be in [0, 86400] (0: a round every diloco-h steps)");
  if (strategy.round_seconds > 0 && !row.diloco_round_options)
    config_fail(fmt::format(
        "strategy.round-seconds: rounds bounded by time are DiLoCo's (strategy.kind = {})",
        takes_them));
  if (strategy.paced() && (!row.diloco_round_options || strategy.gossip_group != 0))
    config_fail(
        fmt::format("strategy.tracker-paced: the tracker paces DiLoCo's rounds in all-reduce "
                    "mode (strategy.kind = {}, gossip-group = 0)",
                    takes_them));
  if (strategy.gossip_group != 0) {
    if (!row.diloco_round_options)
      config_fail("strategy.gossip-group: gossip mode averages DiLoCo rounds; strategy.kind is '" +
                  strategy.kind + "'");
    if (strategy.gossip_group < 2 || strategy.gossip_group > 8)
      config_fail(
          fmt::format("strategy.gossip-group must be 0 (all-reduce mode) or in [2, 8], not {}",
                      strategy.gossip_group));
  }
  compress::make_codec(strategy.codec_spec());  // throws Error(config) naming what is wrong
  try {
    proto::parse_all_reduce_algorithm(strategy.all_reduce);
  } catch (const Error& e) {
    config_fail("strategy.all-reduce: " + e.message());
  }
}

std::string StrategySection::codec_spec() const {
  return codec.empty() ? strategy_row(kind).default_codec(*this) : codec;
}

bool StrategySection::steps_with_adamw() const {
  return strategy_row(kind).steps_with_adamw;
}

std::string TrainConfig::identity() const {
  const model::GptConfig& g = model.gpt;
  std::string s = fmt::format("model.kind={}\n", model.kind);
  if (model.external()) {  // the file by its bytes, not its path
    s += fmt::format("model.genesis-blake2b={}\n", model.genesis_blake2b);
  } else if (model.kind == "gpt") {
    s += fmt::format(
        "model.vocab={}\nmodel.context={}\nmodel.n-layer={}\nmodel.n-head={}\n"
        "model.d-model={}\n",
        g.vocab, g.context, g.n_layer, g.n_head, g.d_model);
  } else {
    s += fmt::format("model.vocab={}\nmodel.context={}\nmodel.mlp-embed={}\nmodel.mlp-hidden={}\n",
                     g.vocab, g.context, model.mlp_embed, model.mlp_hidden);
  }
  s += fmt::format("data.source={}\n", data.source);
  if (data.source == "markov") {
    const data::MarkovConfig& m = data.markov;
    s += fmt::format(
        "data.markov-order={}\ndata.markov-successors={}\ndata.markov-uniform-mix={}\n"
        "data.markov-seed={}\ndata.markov-train-tokens={}\ndata.markov-val-tokens={}\n",
        m.order, m.successors, m.uniform_mix, m.seed, data.markov_train_tokens,
        data.markov_val_tokens);
  }  // token files: by content (checkpoint_identity), not by path
  if (data.source == "dataset") s += fmt::format("data.manifest-hash={}\n", data.manifest_hash);
  s += fmt::format("train.steps={}\ntrain.batch={}\ntrain.seed={}\n", train.steps, train.batch,
                   train.seed);
  s += fmt::format("strategy.kind={}\n", strategy.kind);
  s += strategy_row(strategy.kind).identity(strategy);
  return s;
}

}  // namespace loco::train
