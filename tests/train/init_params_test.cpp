// --init: a run's initial parameters from a safetensors file another tool wrote (nanoGPT names,
// no loco digest, no __metadata__, header order unlike loco's), and the run settings that make
// peers with different init files refuse each other.

#include "loco/train/init_params.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "../support/foreign_safetensors.hpp"
#include "../support/temp_dir.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/model/gpt.hpp"
#include "loco/proto/admission.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/run_settings.hpp"

namespace loco::train {
namespace {

using ::testing::HasSubstr;

TrainConfig tiny_run() {
  TrainConfig c;
  c.model.gpt = model::GptConfig{.vocab = 8, .context = 4, .n_layer = 2, .n_head = 2, .d_model = 4};
  c.data.markov_train_tokens = 2'000;
  c.data.markov_val_tokens = 200;
  c.train.batch = 2;
  return c;
}

// Value j of tensor t: distinct everywhere, exact in fp32.
float value(std::size_t t, std::size_t j) {
  return static_cast<float>(t) + static_cast<float>(j) / 1024.0f;
}

// The model's tensors as nanoGPT's state_dict() has them (lm_head.weight tied to wte, the
// attention masks of torch < 2.0), in reverse order.
std::vector<test::ForeignTensor> nanogpt_tensors(const model::GptConfig& config) {
  const std::vector<TensorSpec> specs = model::gpt_tensor_specs(config);
  std::vector<test::ForeignTensor> out;
  for (std::size_t t = specs.size(); t-- > 0;) {
    std::size_t numel = 1;
    for (std::size_t d : specs[t].shape) numel *= d;
    std::vector<float> values(numel);
    for (std::size_t j = 0; j < numel; ++j) values[j] = value(t, j);
    out.push_back({specs[t].name,
                   "F32",
                   {specs[t].shape.begin(), specs[t].shape.end()},
                   test::f32_bytes(values)});
    if (specs[t].name == kTokenEmbeddingName) {
      out.push_back({kTiedHeadName, "F32", out.back().shape, out.back().bytes});
    }
    if (specs[t].name.ends_with(".attn.c_attn.weight")) {  // the causal mask of torch < 2.0
      const std::int64_t n = static_cast<std::int64_t>(config.context);
      const std::string mask_name =
          specs[t].name.substr(0, specs[t].name.size() - std::string("c_attn.weight").size()) +
          "bias";
      out.push_back({mask_name,
                     "F32",
                     {1, 1, n, n},
                     test::f32_bytes(std::vector<float>(static_cast<std::size_t>(n * n), 1.0f))});
    }
  }
  return out;
}

void expect_loaded(const Arena& params) {
  const auto& tensors = params.layout().tensors();
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const auto values = params.tensor(t);
    for (std::size_t j = 0; j < values.size(); ++j) {
      ASSERT_EQ(values[j], value(t, j)) << tensors[t].name << "[" << j << "]";
    }
  }
}

Error load_error(const std::string& path, const TrainConfig& config) {
  Arena params(std::make_shared<const ArenaLayout>(model::gpt_tensor_specs(config.model.gpt)));
  try {
    load_init_params(path, params);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "loaded " << path;
  return Error(ErrorCategory::invalid_argument, "none");
}

TEST(InitParams, InnerLoopStartsFromANanoGptFileWithoutDigest) {
  test::TempDir dir;
  TrainConfig config = tiny_run();
  config.train.init = (dir / "nanogpt.safetensors").string();
  test::write_foreign_safetensors(config.train.init, nanogpt_tensors(config.model.gpt));
  const Corpus corpus(config.data, static_cast<std::uint32_t>(config.model.gpt.vocab));
  InnerLoop loop(config, corpus);
  expect_loaded(loop.params());
}

TEST(InitParams, TakesLmHeadAloneForTheTiedEmbeddingInHalfPrecision) {
  // safetensors.torch.save_model keeps one name of a tied pair, lm_head.weight; a model saved
  // after model.half() has F16 tensors. All zero but the embedding's first value, 1.0.
  test::TempDir dir;
  const TrainConfig config = tiny_run();
  std::vector<test::ForeignTensor> tensors;
  for (const TensorSpec& spec : model::gpt_tensor_specs(config.model.gpt)) {
    std::size_t numel = 1;
    for (std::size_t d : spec.shape) numel *= d;
    std::string bytes(numel * 2, '\0');
    const bool embedding = spec.name == kTokenEmbeddingName;
    if (embedding) bytes[1] = '\x3c';  // F16 1.0 = 0x3c00, little-endian
    tensors.push_back({embedding ? kTiedHeadName : spec.name,
                       "F16",
                       {spec.shape.begin(), spec.shape.end()},
                       bytes});
  }
  const std::string path = (dir / "tied.safetensors").string();
  test::write_foreign_safetensors(path, tensors, "{\"format\":\"pt\"}");
  Arena params(std::make_shared<const ArenaLayout>(model::gpt_tensor_specs(config.model.gpt)));
  std::fill(params.tensor(0).begin(), params.tensor(0).end(), 5.0f);
  load_init_params(path, params);
  const auto wte = params.tensor(params.layout().index_of(kTokenEmbeddingName));
  EXPECT_EQ(wte[0], 1.0f);
  EXPECT_TRUE(std::all_of(wte.begin() + 1, wte.end(), [](float v) { return v == 0.0f; }));
}

TEST(InitParams, NamesTheMissingExtraOrMisshapenTensor) {
  test::TempDir dir;
  const TrainConfig config = tiny_run();
  const std::string path = (dir / "bad.safetensors").string();
  auto tensors = nanogpt_tensors(config.model.gpt);

  auto missing = tensors;
  std::erase_if(missing, [](const auto& t) { return t.name == "transformer.h.1.mlp.c_fc.bias"; });
  test::write_foreign_safetensors(path, missing);
  EXPECT_THAT(load_error(path, config).what(),
              HasSubstr("has no tensor 'transformer.h.1.mlp.c_fc.bias' (the model's is [16])"));

  auto extra = tensors;
  extra.push_back({"transformer.h.2.ln_1.bias", "F32", {4}, test::f32_bytes({1, 2, 3, 4})});
  test::write_foreign_safetensors(path, extra);
  EXPECT_THAT(load_error(path, config).what(),
              HasSubstr("has tensor 'transformer.h.2.ln_1.bias', which the model does not have"));

  auto transposed = tensors;
  for (auto& t : transposed) {
    if (t.name == "transformer.h.0.attn.c_attn.weight") t.shape = {4, 12};  // HF Conv1D layout
  }
  test::write_foreign_safetensors(path, transposed);
  EXPECT_THAT(load_error(path, config).what(),
              HasSubstr("tensor 'transformer.h.0.attn.c_attn.weight' of shape [4, 12], "
                        "expected [12, 4]"));

  auto untied = tensors;
  for (auto& t : untied) {
    if (t.name == kTiedHeadName) t.bytes[0] = static_cast<char>(t.bytes[0] ^ 1);
  }
  test::write_foreign_safetensors(path, untied);
  EXPECT_THAT(load_error(path, config).what(), HasSubstr("loco ties the two"));
  EXPECT_EQ(load_error(path, config).category(), ErrorCategory::format);
}

TEST(InitParams, RunSettingsCarryTheInitFilesDigest) {
  test::TempDir dir;
  TrainConfig a = tiny_run();
  TrainConfig b = tiny_run();
  a.train.init = (dir / "a.safetensors").string();
  b.train.init = (dir / "b.safetensors").string();
  auto tensors = nanogpt_tensors(a.model.gpt);
  test::write_foreign_safetensors(a.train.init, tensors);
  tensors.front().bytes[0] = static_cast<char>(tensors.front().bytes[0] ^ 1);
  test::write_foreign_safetensors(b.train.init, tensors);

  auto digest_of = [](const TrainConfig& c) {
    for (const proto::Setting& s : run_settings(c)) {
      if (s.name == "train.init-blake2b") return s.value;
    }
    return std::string("absent");
  };
  EXPECT_EQ(digest_of(tiny_run()), "absent");
  EXPECT_EQ(digest_of(a).size(), 64u);
  EXPECT_EQ(digest_of(a), init_file_digest(a.train.init));
  EXPECT_NE(digest_of(a), digest_of(b));
  // The tracker's admission check refuses the peer, naming the setting, and one without init.
  EXPECT_THAT(proto::settings_refusal(run_settings(a), run_settings(b)).value_or("admitted"),
              HasSubstr("setting train.init-blake2b differs"));
  EXPECT_THAT(
      proto::settings_refusal(run_settings(a), run_settings(tiny_run())).value_or("admitted"),
      HasSubstr("setting train.init-blake2b is missing on this peer"));
  TrainConfig missing = tiny_run();
  missing.train.init = (dir / "none.safetensors").string();
  EXPECT_THROW(run_settings(missing), Error);
}

TEST(InitParams, RunConfigNamesTheFileRelativeToItsFolder) {
  test::TempDir dir;
  const TrainConfig model = tiny_run();
  test::write_foreign_safetensors((dir / "init.safetensors").string(),
                                  nanogpt_tensors(model.model.gpt));
  std::ofstream(dir / "run.toml") << "[model]\nvocab = 8\ncontext = 4\nn-layer = 2\nn-head = 2\n"
                                     "d-model = 4\n[train]\ninit = \"init.safetensors\"\n";
  const TrainConfig loaded = cli::load_train_config(dir / "run.toml");
  EXPECT_EQ(std::filesystem::path(loaded.train.init), dir / "init.safetensors");
  const auto settings = run_settings(loaded);
  EXPECT_NE(
      std::find(settings.begin(), settings.end(),
                proto::Setting{"train.init-blake2b", init_file_digest(dir / "init.safetensors")}),
      settings.end());
}

}  // namespace
}  // namespace loco::train
