#include "loco/train/train_config.hpp"

#include <fmt/format.h>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/train/make_demo.hpp"
#include "loco/train/make_streaming.hpp"

namespace loco::train {

void TrainConfig::validate() const {
  auto fail = [](const std::string& what) { throw Error(ErrorCategory::config, what); };
  if (model.kind != "gpt" && model.kind != "mlp") {
    fail("model.kind must be 'gpt' or 'mlp', not '" + model.kind + "'");
  }
  model.gpt.validate();
  if (model.gpt.vocab > 65536) fail("model.vocab must be at most 65536 (tokens are uint16)");
  if (model.kind == "mlp") {
    model::MlpConfig{model.gpt.vocab, model.mlp_embed, model.mlp_hidden, model.gpt.context}
        .validate();
  }
  adamw.validate();
  optim::LrSchedule schedule = lr;
  schedule.total_steps = train.steps;
  schedule.validate();
  if (train.steps < 1) fail("train.steps must be at least 1");
  if (train.batch < 1 || train.batch > 65536) fail("train.batch must be in [1, 65536]");
  if (train.log_every < 1) fail("train.log-every must be at least 1");
  if (train.eval_batches < 1) fail("train.eval-batches must be at least 1");
  if (train.threads < 1 || train.threads > 1024) fail("train.threads must be in [1, 1024]");
  if (data.shard.count < 1 || data.shard.index >= data.shard.count) {
    fail("data.shard-index must be below data.shard-count (at least 1)");
  }
  if (strategy.kind != "none" && strategy.kind != "diloco" && strategy.kind != "ddp" &&
      strategy.kind != "streaming" && strategy.kind != "demo")
    fail("strategy.kind must be 'none', 'diloco', 'ddp', 'streaming' or 'demo', not '" +
         strategy.kind + "'");
  if (strategy.kind == "streaming") streaming_config(strategy).validate();
  if (strategy.kind == "demo") {
    if (!strategy.codec.empty())
      fail(
          "strategy.codec does not apply to demo: its messages are set by strategy.demo-chunk, "
          "demo-topk and demo-values");
    demo_config(*this).validate();
  }
  if (strategy.kind == "diloco") {
    if (strategy.diloco_h < 1) fail("strategy.diloco-h must be at least 1");
    strategy.outer.validate();
  }
  if (!(strategy.round_seconds >= 0 && strategy.round_seconds <= 86'400))
    fail("strategy.round-seconds must be in [0, 86400] (0: a round every diloco-h steps)");
  if (strategy.round_seconds > 0 && strategy.kind != "diloco")
    fail(
        "strategy.round-seconds: rounds bounded by time are DiLoCo's (strategy.kind = "
        "\"diloco\")");
  if (strategy.tracker_paced && (strategy.kind != "diloco" || strategy.gossip_group != 0))
    fail(
        "strategy.tracker-paced: the tracker paces DiLoCo's rounds in all-reduce mode "
        "(strategy.kind = \"diloco\", gossip-group = 0)");
  if (strategy.gossip_group != 0) {
    if (strategy.kind != "diloco")
      fail("strategy.gossip-group: gossip mode averages DiLoCo rounds; strategy.kind is '" +
           strategy.kind + "'");
    if (strategy.gossip_group < 2 || strategy.gossip_group > 8)
      fail(fmt::format("strategy.gossip-group must be 0 (all-reduce mode) or in [2, 8], not {}",
                       strategy.gossip_group));
  }
  compress::make_codec(strategy.codec_spec());  // throws Error(config) naming what is wrong
  try {
    proto::parse_all_reduce_algorithm(strategy.all_reduce);
  } catch (const Error& e) {
    fail("strategy.all-reduce: " + e.message());
  }
}

std::string StrategySection::codec_spec() const {
  if (!codec.empty()) return codec;
  if (kind == "demo")
    return DemoConfig{.chunk = demo_chunk, .topk = demo_topk, .values = demo_values}.codec_spec();
  return kind == "ddp" ? "fp32" : "int8:block=256";
}

std::string TrainConfig::identity() const {
  const model::GptConfig& g = model.gpt;
  std::string s = fmt::format("model.kind={}\nmodel.vocab={}\nmodel.context={}\n", model.kind,
                              g.vocab, g.context);
  if (model.kind == "gpt") {
    s += fmt::format("model.n-layer={}\nmodel.n-head={}\nmodel.d-model={}\n", g.n_layer, g.n_head,
                     g.d_model);
  } else {
    s +=
        fmt::format("model.mlp-embed={}\nmodel.mlp-hidden={}\n", model.mlp_embed, model.mlp_hidden);
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
  s += fmt::format("train.steps={}\ntrain.batch={}\ntrain.seed={}\n", train.steps, train.batch,
                   train.seed);
  s += fmt::format("strategy.kind={}\n", strategy.kind);
  if (strategy.kind == "streaming") s += streaming_identity(strategy);
  if (strategy.kind == "demo") s += demo_identity(strategy);
  return s;
}

}  // namespace loco::train
