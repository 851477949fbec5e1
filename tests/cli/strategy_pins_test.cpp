// What each strategy kind makes of the run configs in configs/, pinned: the run settings' digest
// (the tracker admits peers by it: a change splits old peers from new), the checkpoint identity
// (resume refuses another), the final round, the log line, the swarm's codec, the shared arenas
// and whether AdamW steps. Written before the strategy table (train/strategy_kinds.hpp) replaced
// the switches on the kind, so that the table is shown to change none of them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "loco/cli/train_options.hpp"
#include "loco/core/hash.hpp"
#include "loco/proto/tracker_snapshot.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/make_strategy.hpp"
#include "loco/train/run_end.hpp"
#include "loco/train/run_settings.hpp"
#include "loco/train/swarm_strategy.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {
namespace {

std::string short_hex(const Digest& d) {
  return to_hex(d).substr(0, 16);
}

std::string summary(const TrainConfig& c) {
  const std::string identity = c.identity();
  return fmt::format("settings={} identity={} final={} describe=[{}] codec={} names={} adamw={}",
                     short_hex(proto::settings_digest(run_settings(c))),
                     short_hex(blake2b(std::as_bytes(std::span(identity)))), final_round(c),
                     describe_strategy(c), swarm_codec(c), fmt::join(shared_state_names(c), ","),
                     c.strategy.steps_with_adamw());
}

using Change = std::function<void(TrainConfig&)>;

const std::vector<std::pair<std::string, Change>>& changes() {
  static const std::vector<std::pair<std::string, Change>> all = {
      {"as-is", [](TrainConfig&) {}},
      {"none", [](TrainConfig& c) { c.strategy.kind = "none"; }},
      {"diloco", [](TrainConfig& c) { c.strategy.kind = "diloco"; }},
      {"diloco-swarm",
       [](TrainConfig& c) {
         c.strategy.kind = "diloco";
         apply_swarm_defaults(c);
       }},
      {"diloco-gossip",
       [](TrainConfig& c) {
         c.strategy.kind = "diloco";
         c.strategy.gossip_group = 4;
         apply_swarm_defaults(c);
       }},
      {"diloco-timed",
       [](TrainConfig& c) {
         c.strategy.kind = "diloco";
         c.strategy.round_seconds = 2.5;
         apply_swarm_defaults(c);
       }},
      {"ddp", [](TrainConfig& c) { c.strategy.kind = "ddp"; }},
      {"ddp-swarm",
       [](TrainConfig& c) {
         c.strategy.kind = "ddp";
         c.strategy.all_reduce = "ring";
         apply_swarm_defaults(c);
       }},
      {"streaming",
       [](TrainConfig& c) {
         c.strategy.kind = "streaming";
         c.strategy.tau = 2;
       }},
      {"streaming-eager",
       [](TrainConfig& c) {
         c.strategy.kind = "streaming";
         c.strategy.eager = "delayed";
         c.strategy.fragments = 1;
         apply_swarm_defaults(c);
       }},
      {"demo",
       [](TrainConfig& c) {
         c.strategy.kind = "demo";
         c.strategy.codec.clear();
       }},
      {"demo-late",
       [](TrainConfig& c) {
         c.strategy.kind = "demo";
         c.strategy.codec.clear();
         c.strategy.demo_late = true;
         c.strategy.demo_values = "int8";
         apply_swarm_defaults(c);
       }},
  };
  return all;
}

// "config/change" -> summary, as computed before the strategy table.
const std::map<std::string, std::string> kPinned = {
    {"tiny.toml/as-is",
     "settings=93c40cd51b217a7a identity=34d16024d0c3b859 final=0 describe=[none] "
     "codec=int8:block=256 names= adamw=true"},
    {"tiny.toml/none",
     "settings=93c40cd51b217a7a identity=34d16024d0c3b859 final=0 describe=[none] "
     "codec=int8:block=256 names= adamw=true"},
    {"tiny.toml/diloco",
     "settings=7edcf04b18e00773 identity=23079c31c60480b8 final=15 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"tiny.toml/diloco-swarm",
     "settings=75b877b8cbb018d9 identity=23079c31c60480b8 final=15 describe=[diloco rounds paced "
     "by the tracker (H=20 steps of the median member) codec=int8:block=256] codec=int8:block=256 "
     "names=outer.params,outer.momentum adamw=true"},
    {"tiny.toml/diloco-gossip",
     "settings=20d7cb8aa96aa900 identity=23079c31c60480b8 final=0 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"tiny.toml/diloco-timed",
     "settings=df6ce26d0bc6b194 identity=23079c31c60480b8 final=15 describe=[diloco rounds of 2.5 "
     "s (nominal H=20) codec=int8:block=256] codec=int8:block=256 "
     "names=outer.params,outer.momentum adamw=true"},
    {"tiny.toml/ddp",
     "settings=aa8e66e1d5f6b9ef identity=d5f164d084d776b3 final=300 describe=[ddp codec=fp32] "
     "codec=fp32 names=ddp.params,ddp.m,ddp.v adamw=true"},
    {"tiny.toml/ddp-swarm",
     "settings=9d59b9633dd7ce56 identity=d5f164d084d776b3 final=300 describe=[ddp codec=fp32] "
     "codec=fp32 names=ddp.params,ddp.m,ddp.v adamw=true"},
    {"tiny.toml/streaming",
     "settings=25b738aef1980851 identity=2751fd98c7050770 final=29 describe=[streaming H=20 P=2 "
     "tau=2 alpha=0.5 codec=fp4:block=64] codec=fp4:block=64 names=outer.params,outer.momentum "
     "adamw=true"},
    {"tiny.toml/streaming-eager",
     "settings=dd3218beafc64209 identity=42c7081b4b8b1ff1 final=14 describe=[streaming H=20 P=1 "
     "tau=0 alpha=0.5 codec=fp4:block=64] codec=fp4:block=64 names=outer.params,outer.momentum "
     "adamw=true"},
    {"tiny.toml/demo",
     "settings=4e279e90c924a24b identity=87cf03aa2d1ea9f4 final=300 describe=[demo beta=0.999 "
     "late=false codec=demo:chunk=64,topk=32,values=sign] codec=demo:chunk=64,topk=32,values=sign "
     "names=demo.params adamw=false"},
    {"tiny.toml/demo-late",
     "settings=86beceaa3eb6df37 identity=7f838d541e271358 final=300 describe=[demo beta=0.999 "
     "late=true codec=demo:chunk=64,topk=32,values=int8] codec=demo:chunk=64,topk=32,values=int8 "
     "names=demo.params,demo.pending adamw=false"},
    {"small.toml/as-is",
     "settings=affa4c267d8f51ae identity=526bb3febf88f23f final=0 describe=[none] "
     "codec=int8:block=256 names= adamw=true"},
    {"small.toml/none",
     "settings=affa4c267d8f51ae identity=526bb3febf88f23f final=0 describe=[none] "
     "codec=int8:block=256 names= adamw=true"},
    {"small.toml/diloco",
     "settings=e03677d723e57112 identity=cf2cb049c16f494e final=250 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"small.toml/diloco-swarm",
     "settings=28ff878cbbd43c05 identity=cf2cb049c16f494e final=250 describe=[diloco rounds paced "
     "by the tracker (H=20 steps of the median member) codec=int8:block=256] codec=int8:block=256 "
     "names=outer.params,outer.momentum adamw=true"},
    {"small.toml/diloco-gossip",
     "settings=89dc1de93aeef82f identity=cf2cb049c16f494e final=0 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"small.toml/diloco-timed",
     "settings=5e7217d0e45222f6 identity=cf2cb049c16f494e final=250 describe=[diloco rounds of 2.5 "
     "s (nominal H=20) codec=int8:block=256] codec=int8:block=256 "
     "names=outer.params,outer.momentum adamw=true"},
    {"small.toml/ddp",
     "settings=0edda0297fd17c9e identity=7a6d04eb92f63199 final=5000 describe=[ddp codec=fp32] "
     "codec=fp32 names=ddp.params,ddp.m,ddp.v adamw=true"},
    {"small.toml/ddp-swarm",
     "settings=193398d2ca451a2d identity=7a6d04eb92f63199 final=5000 describe=[ddp codec=fp32] "
     "codec=fp32 names=ddp.params,ddp.m,ddp.v adamw=true"},
    {"small.toml/streaming",
     "settings=8f1ec2e763bcc88d identity=9056a27c03d84416 final=499 describe=[streaming H=20 P=2 "
     "tau=2 alpha=0.5 codec=fp4:block=64] codec=fp4:block=64 names=outer.params,outer.momentum "
     "adamw=true"},
    {"small.toml/streaming-eager",
     "settings=652dc826d602999e identity=f3e0ed0ea1fb36ee final=249 describe=[streaming H=20 P=1 "
     "tau=0 alpha=0.5 codec=fp4:block=64] codec=fp4:block=64 names=outer.params,outer.momentum "
     "adamw=true"},
    {"small.toml/demo",
     "settings=1a38ef4c46137cda identity=27f58b8862ef6b37 final=5000 describe=[demo beta=0.999 "
     "late=false codec=demo:chunk=64,topk=32,values=sign] codec=demo:chunk=64,topk=32,values=sign "
     "names=demo.params adamw=false"},
    {"small.toml/demo-late",
     "settings=e7cee8c313f1a9ab identity=0f1063f37dc398ed final=5000 describe=[demo beta=0.999 "
     "late=true codec=demo:chunk=64,topk=32,values=int8] codec=demo:chunk=64,topk=32,values=int8 "
     "names=demo.params,demo.pending adamw=false"},
    {"swarm-tiny.toml/as-is",
     "settings=7edcf04b18e00773 identity=23079c31c60480b8 final=15 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"swarm-tiny.toml/none",
     "settings=93c40cd51b217a7a identity=34d16024d0c3b859 final=0 describe=[none] "
     "codec=int8:block=256 names= adamw=true"},
    {"swarm-tiny.toml/diloco",
     "settings=7edcf04b18e00773 identity=23079c31c60480b8 final=15 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"swarm-tiny.toml/diloco-swarm",
     "settings=7edcf04b18e00773 identity=23079c31c60480b8 final=15 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"swarm-tiny.toml/diloco-gossip",
     "settings=20d7cb8aa96aa900 identity=23079c31c60480b8 final=0 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"swarm-tiny.toml/diloco-timed",
     "settings=df6ce26d0bc6b194 identity=23079c31c60480b8 final=15 describe=[diloco rounds of 2.5 "
     "s (nominal H=20) codec=int8:block=256] codec=int8:block=256 "
     "names=outer.params,outer.momentum adamw=true"},
    {"swarm-tiny.toml/ddp",
     "settings=5e4f1f2f2d9cd8fe identity=d5f164d084d776b3 final=300 describe=[ddp "
     "codec=int8:block=256] codec=int8:block=256 names=ddp.params,ddp.m,ddp.v adamw=true"},
    {"swarm-tiny.toml/ddp-swarm",
     "settings=75add3790be758fc identity=d5f164d084d776b3 final=300 describe=[ddp "
     "codec=int8:block=256] codec=int8:block=256 names=ddp.params,ddp.m,ddp.v adamw=true"},
    {"swarm-tiny.toml/streaming",
     "settings=25b738aef1980851 identity=2751fd98c7050770 final=29 describe=[streaming H=20 P=2 "
     "tau=2 alpha=0.5 codec=fp4:block=64] codec=fp4:block=64 names=outer.params,outer.momentum "
     "adamw=true"},
    {"swarm-tiny.toml/streaming-eager",
     "settings=dd3218beafc64209 identity=42c7081b4b8b1ff1 final=14 describe=[streaming H=20 P=1 "
     "tau=0 alpha=0.5 codec=fp4:block=64] codec=fp4:block=64 names=outer.params,outer.momentum "
     "adamw=true"},
    {"swarm-tiny.toml/demo",
     "settings=4e279e90c924a24b identity=87cf03aa2d1ea9f4 final=300 describe=[demo beta=0.999 "
     "late=false codec=demo:chunk=64,topk=32,values=sign] codec=demo:chunk=64,topk=32,values=sign "
     "names=demo.params adamw=false"},
    {"swarm-tiny.toml/demo-late",
     "settings=86beceaa3eb6df37 identity=7f838d541e271358 final=300 describe=[demo beta=0.999 "
     "late=true codec=demo:chunk=64,topk=32,values=int8] codec=demo:chunk=64,topk=32,values=int8 "
     "names=demo.params,demo.pending adamw=false"},
    {"sim-model.toml/as-is",
     "settings=3c7a37718ef60ed5 identity=1a7b8c46f5b9cc59 final=30 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"sim-model.toml/none",
     "settings=7500b059a65e970a identity=d76b8ee86ca9cb23 final=0 describe=[none] "
     "codec=int8:block=256 names= adamw=true"},
    {"sim-model.toml/diloco",
     "settings=3c7a37718ef60ed5 identity=1a7b8c46f5b9cc59 final=30 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"sim-model.toml/diloco-swarm",
     "settings=3120547f374534e8 identity=1a7b8c46f5b9cc59 final=30 describe=[diloco rounds paced "
     "by the tracker (H=20 steps of the median member) codec=int8:block=256] codec=int8:block=256 "
     "names=outer.params,outer.momentum adamw=true"},
    {"sim-model.toml/diloco-gossip",
     "settings=f6fd4c151e84a956 identity=1a7b8c46f5b9cc59 final=0 describe=[diloco H=20 "
     "codec=int8:block=256] codec=int8:block=256 names=outer.params,outer.momentum adamw=true"},
    {"sim-model.toml/diloco-timed",
     "settings=545708ff6d70fb83 identity=1a7b8c46f5b9cc59 final=30 describe=[diloco rounds of 2.5 "
     "s (nominal H=20) codec=int8:block=256] codec=int8:block=256 "
     "names=outer.params,outer.momentum adamw=true"},
    {"sim-model.toml/ddp",
     "settings=6cab27382218c453 identity=b815275c8c623282 final=600 describe=[ddp "
     "codec=int8:block=256] codec=int8:block=256 names=ddp.params,ddp.m,ddp.v adamw=true"},
    {"sim-model.toml/ddp-swarm",
     "settings=4748ba6f89e151b3 identity=b815275c8c623282 final=600 describe=[ddp "
     "codec=int8:block=256] codec=int8:block=256 names=ddp.params,ddp.m,ddp.v adamw=true"},
    {"sim-model.toml/streaming",
     "settings=175f3055e52618fb identity=f9fa8d96f1555ddd final=59 describe=[streaming H=20 P=2 "
     "tau=2 alpha=0.5 codec=fp4:block=64] codec=fp4:block=64 names=outer.params,outer.momentum "
     "adamw=true"},
    {"sim-model.toml/streaming-eager",
     "settings=837eb7a83d2ea30d identity=ba605b57d610a235 final=29 describe=[streaming H=20 P=1 "
     "tau=0 alpha=0.5 codec=fp4:block=64] codec=fp4:block=64 names=outer.params,outer.momentum "
     "adamw=true"},
    {"sim-model.toml/demo",
     "settings=82588c9a617596df identity=8f1a07d428345784 final=600 describe=[demo beta=0.999 "
     "late=false codec=demo:chunk=64,topk=32,values=sign] codec=demo:chunk=64,topk=32,values=sign "
     "names=demo.params adamw=false"},
    {"sim-model.toml/demo-late",
     "settings=c5c04bd21710d0b9 identity=2483021d09e1938d final=600 describe=[demo beta=0.999 "
     "late=true codec=demo:chunk=64,topk=32,values=int8] codec=demo:chunk=64,topk=32,values=int8 "
     "names=demo.params,demo.pending adamw=false"},
};

TEST(StrategyPins, EveryKindOfEveryConfigKeepsItsSettingsIdentityAndRounds) {
  for (const char* file : {"tiny.toml", "small.toml", "swarm-tiny.toml", "sim-model.toml"}) {
    const TrainConfig base =
        cli::load_train_config(std::string(LOCO_SOURCE_DIR) + "/configs/" + file);
    for (const auto& [name, change] : changes()) {
      TrainConfig c = base;
      change(c);
      const std::string key = fmt::format("{}/{}", file, name);
      const auto pinned = kPinned.find(key);
      const std::string actual = summary(c);
      EXPECT_TRUE(pinned != kPinned.end() && pinned->second == actual)
          << "PIN {\"" << key << "\",\n     \"" << actual << "\"},";
    }
  }
}

}  // namespace
}  // namespace loco::train
