// loco-tracker export: a custody copy of the run's state out as a safetensors file of θ under
// nanoGPT's names, with the round, the state hash and the run config in its metadata; a round not
// held, a copy of another model and a tracker without a state file are refused with the reason.

#include "tracker/model_export.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/train/genesis.hpp"
#include "tracker/custody_store.hpp"

namespace loco::tracker {
namespace {

const std::string kRunConfig = LOCO_SOURCE_DIR "/configs/swarm-tiny.toml";

// The run's state at `round`, θ set to values of its own (not the genesis).
train::SharedState state_at(const std::string& run_config, std::uint64_t round) {
  train::SharedState state = train::genesis_state(cli::load_train_config(run_config));
  std::span<float> theta = state.arena(0).data();
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = static_cast<float>(i % 97) / 97.0f;
  state.set_round(round);
  return state;
}

void keep(const TrackerOptions& o, const train::SharedState& state) {
  CustodyStore store(o.state_file + ".custody", o.run_id, to_custody_limits(o));
  const proto::StateBytes bytes = state.bytes();
  proto::CustodyCopy copy{.manifest = state.manifest(), .state = {}};
  copy.state.resize(bytes.size());
  bytes.read(0, copy.state);
  store.add(copy);
}

std::string error_of(const TrackerOptions& o, const ExportOptions& e) {
  try {
    export_model(o, e);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ModelExport, WritesTheNewestCopysParametersUnderNanoGptsNames) {
  test::TempDir dir;
  TrackerOptions o;
  o.run_id = "export-run";
  o.run_config = kRunConfig;
  o.state_file = (dir / "tracker.state").string();
  keep(o, state_at(kRunConfig, 5));
  const train::SharedState newest = state_at(kRunConfig, 9);
  keep(o, newest);

  const ExportOptions options{.out = (dir / "model.safetensors").string(), .round = {}};
  const ExportedModel model = export_model(o, options);
  EXPECT_EQ(model.round, 9u);
  EXPECT_EQ(model.state_hash, to_hex(newest.hash()));
  EXPECT_EQ(model.parameters, newest.arena(0).layout().parameter_count());

  const auto file = checkpoint::SafetensorsFile::read(options.out);
  EXPECT_EQ(file.metadata().at("loco.round"), "9");
  EXPECT_EQ(file.metadata().at("loco.run_id"), "export-run");
  EXPECT_EQ(file.metadata().at("loco.state_hash"), to_hex(newest.hash()));
  EXPECT_NE(file.metadata().at("loco.run_config").find("n-layer = 2"), std::string::npos);
  ASSERT_TRUE(file.contains("transformer.wte.weight")) << "nanoGPT's names";
  EXPECT_FALSE(file.contains("outer.momentum.transformer.wte.weight")) << "θ only";
  // Every tensor holds θ's values.
  std::vector<float> values(newest.arena(0).layout().parameter_count());
  std::size_t at = 0;
  for (const std::string& name : file.names()) {
    const std::size_t n = file.tensor(name).data.size();
    file.copy_to(name, std::span(values).subspan(at, n));
    at += n;
  }
  EXPECT_EQ(at, values.size());
  EXPECT_EQ(values[1], 1.0f / 97.0f);

  const ExportOptions fifth{.out = (dir / "five.safetensors").string(), .round = 5};
  EXPECT_EQ(export_model(o, fifth).round, 5u);
}

TEST(ModelExport, RefusesWhatItCannotExportWithTheReason) {
  test::TempDir dir;
  TrackerOptions o;
  o.run_id = "export-run";
  o.run_config = kRunConfig;
  o.state_file = (dir / "no.state").string();  // no copies were ever kept next to it
  const ExportOptions options{.out = (dir / "model.safetensors").string(), .round = {}};
  EXPECT_NE(error_of(o, options).find("no custody folder"), std::string::npos);

  o.state_file = (dir / "tracker.state").string();
  std::filesystem::create_directories(dir / "tracker.state.custody");  // a tracker ran, kept none
  EXPECT_NE(error_of(o, options).find("no custody copy of run 'export-run'"), std::string::npos);

  keep(o, state_at(kRunConfig, 3));
  EXPECT_NE(
      error_of(o, ExportOptions{.out = options.out, .round = 4}).find("no custody copy of round 4"),
      std::string::npos);

  // A copy of another model, under this run's id: refused, not reshaped.
  const std::string other_model = (dir / "bigger.toml").string();
  std::string text;
  {
    std::ifstream in(kRunConfig);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto d_model = text.find("d-model = 64");
  ASSERT_NE(d_model, std::string::npos);
  text.replace(d_model, 12, "d-model = 32");
  std::ofstream(other_model) << text;
  keep(o, state_at(other_model, 6));
  const std::string refused = error_of(o, options);
  EXPECT_NE(refused.find("is not a state of the model of"), std::string::npos) << refused;
  EXPECT_FALSE(std::filesystem::exists(options.out)) << "nothing written";
}

// The status page's model: the file export writes, of the copy the tracker holds in memory,
// built once per copy, under a file name made of the run id's safe characters.
TEST(ModelExport, TheStatusPagesModelIsTheExportOfTheHeldCopyBuiltOncePerCopy) {
  test::TempDir dir;
  TrackerOptions o;
  o.run_id = "a \"run\"/1";
  o.run_config = kRunConfig;
  std::optional<HeldCopy> held;
  int asked = 0;
  const ModelSource source = model_source(o, [&] {
    ++asked;
    return held;
  });
  EXPECT_EQ(source(), nullptr) << "no copy yet";

  const train::SharedState state = state_at(kRunConfig, 12);
  const proto::StateBytes bytes = state.bytes();
  auto copy = std::make_shared<std::vector<std::byte>>(bytes.size());
  bytes.read(0, *copy);
  held = HeldCopy{.round = 12, .state_hash = state.hash(), .state = copy};
  const auto model = source();
  ASSERT_TRUE(model);
  EXPECT_EQ(model->round, 12u);
  EXPECT_EQ(model->filename, "a__run__1-round-12.safetensors");
  EXPECT_EQ(source(), model) << "the same copy: not built again";
  const auto file = checkpoint::SafetensorsFile::parse(
      std::as_bytes(std::span(model->bytes.data(), model->bytes.size())), "served");
  EXPECT_EQ(file.metadata().at("loco.round"), "12");
  EXPECT_EQ(file.metadata().at("loco.state_hash"), to_hex(state.hash()));
  // The same bytes as loco-tracker export writes for that copy.
  o.state_file = (dir / "tracker.state").string();
  keep(o, state);
  const ExportOptions options{.out = (dir / "model.safetensors").string(), .round = 12};
  export_model(o, options);
  std::ifstream in(options.out, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), model->bytes);
  // A copy whose bytes do not hash to its hash is refused, not served.
  held->round = 13;
  held->state_hash = Digest{};
  EXPECT_THROW(source(), Error);
}

}  // namespace
}  // namespace loco::tracker
