// An external model's genesis file ([model] kind = "external"): written and read back with its
// tensors in order, named by its hash (a file whose bytes differ is refused naming the setting),
// malformed files refused before anything is laid out, the run settings and identity that carry
// the hash, and loco's own models as one producer of such a file.

#include "loco/train/genesis_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../support/foreign_safetensors.hpp"
#include "../support/temp_dir.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/proto/admission.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/run_settings.hpp"

namespace loco::train {
namespace {

using ::testing::HasSubstr;

// An LSTM's tensors, as PyTorch names them, not in alphabetical order: any names go.
struct Model {
  std::vector<std::string> names = {"encoder.rnn.weight_ih_l0", "encoder.rnn.weight_hh_l0",
                                    "encoder.rnn.bias_ih_l0", "head.proj.weight", "head.bias"};
  std::vector<std::vector<std::size_t>> shapes = {{8, 3}, {8, 2}, {8}, {5, 2}, {}};
  std::vector<std::vector<float>> values;

  Model() {
    for (std::size_t t = 0; t < names.size(); ++t) {
      std::size_t n = 1;
      for (std::size_t d : shapes[t]) n *= d;
      values.emplace_back(n);
      for (std::size_t j = 0; j < n; ++j) values[t][j] = static_cast<float>(t) + 0.25f * j;
    }
  }
  std::vector<GenesisTensor> refs() const {
    std::vector<GenesisTensor> out;
    for (std::size_t t = 0; t < names.size(); ++t)
      out.push_back({.name = names[t], .shape = shapes[t], .data = values[t].data()});
    return out;
  }
};

std::string file_hash(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  return to_hex(blake2b(std::as_bytes(std::span(bytes.data(), bytes.size()))));
}

TrainConfig external_run(const std::filesystem::path& genesis, const std::string& hash) {
  TrainConfig c;
  c.model.kind = "external";
  c.model.genesis = genesis.string();
  c.model.genesis_blake2b = hash;
  c.strategy.kind = "diloco";
  return c;
}

TEST(GenesisFile, WrittenAndReadBackInOrderNamedByItsHash) {
  test::TempDir dir;
  const Model model;
  const std::string hash = write_genesis(dir / "g.safetensors", model.refs());
  EXPECT_EQ(hash, file_hash(dir / "g.safetensors"));
  EXPECT_EQ(write_genesis(dir / "again.safetensors", model.refs()), hash) << "deterministic";

  const Genesis g = read_genesis(dir / "g.safetensors", hash);
  ASSERT_EQ(g.layout->tensor_count(), model.names.size());
  for (std::size_t t = 0; t < model.names.size(); ++t) {
    EXPECT_EQ(g.layout->tensor(t).name, model.names[t]);
    EXPECT_EQ(g.layout->tensor(t).shape, model.shapes[t]);
    const auto values = g.params.tensor(t);
    EXPECT_TRUE(std::ranges::equal(values, model.values[t])) << model.names[t];
  }
  EXPECT_THAT(genesis_config_lines(dir / "g.safetensors", hash),
              HasSubstr("kind = \"external\"\ngenesis = \"g.safetensors\""));
}

TEST(GenesisFile, AFileWhoseBytesDifferIsRefusedNamingTheSetting) {
  test::TempDir dir;
  const Model model;
  const std::string hash = write_genesis(dir / "g.safetensors", model.refs());
  Model other;
  other.values[2][1] += 1.0f;  // one weight
  write_genesis(dir / "g.safetensors", other.refs());
  try {
    read_genesis(dir / "g.safetensors", hash);
    ADD_FAILURE() << "a file of another hash was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    EXPECT_THAT(e.message(), HasSubstr("model.genesis-blake2b"));
    EXPECT_THAT(e.message(), HasSubstr(hash));
  }
  for (const std::filesystem::path& path : {dir / "absent.safetensors", dir.path()}) {
    try {
      read_genesis(path, hash);
      ADD_FAILURE() << path << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::io) << e.message();
      EXPECT_THAT(e.message(), HasSubstr("model.genesis"));
    }
  }
}

// A file of the right hash (the organiser's own) that is malformed: a clear format error.
Error malformed(const test::TempDir& dir, const std::string& bytes) {
  const auto path = dir / "bad.safetensors";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  try {
    read_genesis(path, file_hash(path));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "a malformed genesis file was read";
  return Error(ErrorCategory::format, "");
}

TEST(GenesisFile, MalformedFilesAreRefusedBeforeAnythingIsLaidOut) {
  test::TempDir dir;
  const std::string good =
      test::foreign_safetensors({{"a", "F32", {2}, test::f32_bytes({1.0f, 2.0f})}});
  EXPECT_THAT(malformed(dir, good.substr(0, good.size() - 1)).message(), HasSubstr("bad"));
  EXPECT_EQ(malformed(dir, good.substr(0, 5)).category(), ErrorCategory::format);
  // A header that claims more than the file has: refused before the header is read.
  std::string huge = good;
  huge[6] = '\x7f';
  EXPECT_THAT(malformed(dir, huge).message(), HasSubstr("header"));
  EXPECT_THAT(malformed(dir, test::foreign_safetensors({})).message(), HasSubstr("no tensor"));
  EXPECT_THAT(malformed(dir, test::foreign_safetensors({{"a", "F32", {0, 3}, ""}})).message(),
              HasSubstr("no elements"));
  EXPECT_THAT(
      malformed(dir, test::foreign_safetensors({{"", "F32", {1}, test::f32_bytes({1})}})).message(),
      HasSubstr("cannot be laid out"));
  EXPECT_THAT(malformed(dir, test::foreign_safetensors({{"a", "I64", {1}, std::string(8, '\0')}}))
                  .message(),
              HasSubstr("I64"));
  EXPECT_THAT(
      malformed(dir, test::foreign_safetensors({{"a\\u001b[2J", "F32", {1}, test::f32_bytes({1})}}))
          .message(),
      HasSubstr("control character"));
  // A tensor whose offsets do not span its shape (a liar's size).
  std::string lying = test::foreign_safetensors({{"a", "F32", {1000000}, test::f32_bytes({1})}});
  EXPECT_EQ(malformed(dir, lying).category(), ErrorCategory::format);
}

TEST(GenesisFile, TheWriterRefusesWhatTheReaderWould) {
  test::TempDir dir;
  const float value = 1.0f;
  const std::vector<std::size_t> zero = {2, 0}, deep(9, 1), one = {1};
  const auto error_of = [&](GenesisTensor t) {
    try {
      write_genesis(dir / "w.safetensors", std::span(&t, 1));
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::invalid_argument);
      return e.message();
    }
    return std::string("written");
  };
  EXPECT_EQ(error_of({.name = "w", .shape = one, .data = &value}), "written");
  EXPECT_THAT(error_of({.name = "w", .shape = zero, .data = &value}), HasSubstr("dimension of 0"));
  EXPECT_THAT(error_of({.name = "w", .shape = deep, .data = &value}), HasSubstr("rank 9"));
  EXPECT_THAT(error_of({.name = "w", .shape = one, .data = nullptr}), HasSubstr("no data"));
  EXPECT_THAT(error_of({.name = "w\n", .shape = one, .data = &value}),
              HasSubstr("control character"));
  EXPECT_THROW(write_genesis(dir / "w.safetensors", std::span<const GenesisTensor>{}), Error);
}

TEST(GenesisFile, Bf16TensorsBecomeExactFp32) {
  test::TempDir dir;
  const std::string bf16 = {'\x80', '\x3f', '\x40', '\xc0'};  // 1.0, -3.0
  const auto path = dir / "bf16.safetensors";
  test::write_foreign_safetensors(path.string(), {{"w", "BF16", {2}, bf16}});
  const Genesis g = read_genesis(path, file_hash(path));
  EXPECT_EQ(g.params.tensor(0)[0], 1.0f);
  EXPECT_EQ(g.params.tensor(0)[1], -3.0f);
}

TEST(GenesisFile, RunSettingsAndIdentityCarryTheHash) {
  test::TempDir dir;
  Model model;
  const std::string a = write_genesis(dir / "a.safetensors", model.refs());
  model.values[0][0] = -1.0f;
  const std::string b = write_genesis(dir / "b.safetensors", model.refs());
  const TrainConfig run_a = external_run(dir / "a.safetensors", a);
  const TrainConfig run_b = external_run(dir / "b.safetensors", b);
  run_a.validate();
  const auto settings = run_settings(run_a);
  EXPECT_NE(std::ranges::find(settings, proto::Setting{"model.genesis-blake2b", a}),
            settings.end());
  EXPECT_EQ(std::ranges::find_if(settings,
                                 [](const proto::Setting& s) { return s.name == "model.vocab"; }),
            settings.end())
      << "loco's own model's shape is no setting of an external one";
  // The tracker's admission refuses a peer of the other file, naming the setting.
  EXPECT_THAT(
      proto::settings_refusal(run_settings(run_a), run_settings(run_b)).value_or("admitted"),
      HasSubstr("setting model.genesis-blake2b differs"));
  EXPECT_THAT(run_a.identity(), HasSubstr("model.genesis-blake2b=" + a));
  EXPECT_NE(run_a.identity(), run_b.identity());

  // The genesis state: the file's values as θ, the momentum zero; another file, another hash.
  const SharedState state = genesis_state(run_a);
  EXPECT_EQ(state.parts().size(), 2u);
  EXPECT_EQ(state.arena(0).tensor(4)[0], 4.0f);
  EXPECT_NE(state.hash(), genesis_state(run_b).hash());
  EXPECT_THROW(genesis_state(external_run(dir / "b.safetensors", a)), Error);
}

TEST(GenesisFile, ConfigChecks) {
  test::TempDir dir;
  const std::string hash(64, 'a');
  auto error_of = [](const TrainConfig& c) {
    try {
      c.validate();
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("valid");
  };
  TrainConfig c = external_run(dir / "g.safetensors", hash);
  EXPECT_EQ(error_of(c), "valid");
  c.model.genesis.clear();
  EXPECT_THAT(error_of(c), HasSubstr("model.genesis:"));
  c = external_run(dir / "g.safetensors", std::string(64, 'A'));
  EXPECT_THAT(error_of(c), HasSubstr("model.genesis-blake2b must be"));
  c = external_run(dir / "g.safetensors", "");
  EXPECT_THAT(error_of(c), HasSubstr("model.genesis-blake2b must be"));
  c = external_run(dir / "g.safetensors", hash);
  c.train.init = "init.safetensors";
  EXPECT_THAT(error_of(c), HasSubstr("train.init"));
  c = external_run(dir / "g.safetensors", hash);
  c.strategy.kind = "streaming";
  EXPECT_THAT(error_of(c), HasSubstr("strategy.layout = \"balanced\""));
  c.strategy.layout = "balanced";
  EXPECT_EQ(error_of(c), "valid");
  TrainConfig gpt;
  gpt.model.genesis = "g.safetensors";
  EXPECT_THAT(error_of(gpt), HasSubstr("kind = \"external\""));
  try {
    make_model(external_run(dir / "g.safetensors", hash));
    ADD_FAILURE() << "loco made a model of an external one";
  } catch (const Error& e) {
    EXPECT_THAT(e.message(),
                HasSubstr("an external model needs a trainer peer: the C API or the Python "
                          "package"));
  }
}

TEST(GenesisFile, ARunConfigNamesItAndLocosOwnModelsWriteOne) {
  test::TempDir dir;
  TrainConfig gpt;
  gpt.model.gpt =
      model::GptConfig{.vocab = 8, .context = 4, .n_layer = 2, .n_head = 2, .d_model = 4};
  gpt.strategy.kind = "diloco";
  const std::string hash = write_model_genesis(gpt, dir / "gpt.safetensors");
  std::ofstream(dir / "run.toml") << genesis_config_lines(dir / "gpt.safetensors", hash)
                                  << "[strategy]\nkind = \"diloco\"\n";
  const TrainConfig loaded = cli::load_train_config(dir / "run.toml");
  EXPECT_EQ(std::filesystem::path(loaded.model.genesis), dir / "gpt.safetensors");
  // The same tensors, names, order and values: the same state, bit for bit.
  EXPECT_EQ(genesis_state(loaded).hash(), genesis_state(gpt).hash());
}

}  // namespace
}  // namespace loco::train
