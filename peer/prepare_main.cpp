// loco-prepare: writes the token files and datasets loco-train and loco-peer read
// (docs/FORMATS.md).
//
//   loco-prepare --input book.txt --out-dir data/ [--tokenizer sentencepiece --tokenizer.vocab
//   8000]
//       a dataset: shards of --shard-tokens tokens and data/manifest.txt; prints the manifest's
//       hash, which the run config names (data.manifest-hash). The tokenizer is byte-level, or a
//       SentencePiece model trained on the text (or brought: --tokenizer.model FILE).
//   loco-prepare --input book.txt --train-out train.bin --val-out val.bin [--val-fraction 0.1]
//       byte-level tokens of a text file, split into training and validation sets
//   loco-prepare --source markov --markov.vocab 64 ... --train-out train.bin --val-out val.bin
//       a synthetic Markov corpus; prints its entropy rate (the best achievable loss)

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>

#include "loco/cli/app.hpp"
#include "loco/core/error.hpp"
#include "loco/core/log.hpp"
#include "loco/core/rng.hpp"
#include "loco/data/dataset_writer.hpp"
#include "loco/data/markov_source.hpp"
#include "loco/data/text_corpus.hpp"
#include "loco/data/token_file.hpp"

namespace {

struct Options {
  std::string source = "text";
  std::string input;
  std::string train_out;
  std::string val_out;
  std::string out_dir;
  std::string tokenizer = "bytes";
  std::string tokenizer_model;
  loco::data::SentencePieceOptions sentencepiece;
  std::uint64_t shard_tokens = 1u << 20;
  double val_fraction = 0.1;
  loco::data::MarkovConfig markov;
  std::uint64_t markov_train_tokens = 1'000'000;
  std::uint64_t markov_val_tokens = 100'000;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--source", o.source, "text (a text file, one token per byte) or markov")
      ->check(CLI::IsMember({"text", "markov"}))
      ->capture_default_str();
  loco::cli::add_path_option(app, "--input", o.input, "Text file to tokenise (--source text)");
  loco::cli::add_path_option(app, "--train-out", o.train_out, "Training token file to write");
  loco::cli::add_path_option(app, "--val-out", o.val_out, "Validation token file to write");
  loco::cli::add_path_option(app, "--out-dir", o.out_dir,
                             "Write a dataset (shards and manifest.txt) into this folder instead");
  app.add_option("--tokenizer", o.tokenizer,
                 "--out-dir: bytes (one token per byte) or sentencepiece (subword)")
      ->check(CLI::IsMember({"bytes", "sentencepiece"}))
      ->capture_default_str();
  loco::cli::add_path_option(app, "--tokenizer.model", o.tokenizer_model,
                             "A SentencePiece model to use (default: train one on the text)");
  app.add_option("--tokenizer.vocab", o.sentencepiece.vocab, "Vocabulary of the model to train")
      ->check(CLI::Range(16u, 1u << 20))
      ->capture_default_str();
  app.add_option("--tokenizer.type", o.sentencepiece.type, "Model to train: bpe or unigram")
      ->check(CLI::IsMember({"bpe", "unigram"}))
      ->capture_default_str();
  app.add_option("--shard-tokens", o.shard_tokens, "--out-dir: tokens per shard (the last fewer)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32))
      ->capture_default_str();
  app.add_option("--val-fraction", o.val_fraction, "Share of a text file for validation")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--markov.vocab", o.markov.vocab_size, "Tokens 0..V-1 (2..256)")
      ->capture_default_str();
  app.add_option("--markov.order", o.markov.order, "Tokens of context")->capture_default_str();
  app.add_option("--markov.successors", o.markov.successors, "Likely next tokens per context")
      ->capture_default_str();
  app.add_option("--markov.uniform-mix", o.markov.uniform_mix,
                 "Probability of a uniformly random next token, in (0, 1]")
      ->capture_default_str();
  app.add_option("--markov.seed", o.markov.seed, "Seed of the source and its sequences")
      ->capture_default_str();
  app.add_option("--markov.train-tokens", o.markov_train_tokens, "Training tokens to generate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--markov.val-tokens", o.markov_val_tokens, "Validation tokens to generate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void prepare_text(const Options& o) {
  if (o.input.empty()) {
    throw loco::Error(loco::ErrorCategory::config, "--source text needs --input FILE");
  }
  const auto counts =
      loco::data::prepare_text_corpus(o.input, o.train_out, o.val_out, o.val_fraction);
  std::printf("train: %llu tokens -> %s\nval: %llu tokens -> %s\nvocab: 256\n",
              static_cast<unsigned long long>(counts.train_tokens), o.train_out.c_str(),
              static_cast<unsigned long long>(counts.validation_tokens), o.val_out.c_str());
}

// The dataset's tokenizer, its model (if any) placed in the dataset's folder.
loco::data::Tokenizer dataset_tokenizer(const Options& o) {
  namespace fs = std::filesystem;
  if (o.tokenizer == "bytes") {
    if (!o.tokenizer_model.empty())
      throw loco::Error(loco::ErrorCategory::config,
                        "--tokenizer.model needs --tokenizer sentencepiece");
    return loco::data::Tokenizer::bytes();
  }
  const fs::path model = fs::path(o.out_dir) / loco::data::kTokenizerModelName;
  if (o.tokenizer_model.empty()) {
    spdlog::info("training a SentencePiece {} model of {} tokens on {}", o.sentencepiece.type,
                 o.sentencepiece.vocab, o.input);
    loco::data::train_sentencepiece(o.input, model, o.sentencepiece);
  } else if (!fs::exists(model) || !fs::equivalent(o.tokenizer_model, model)) {
    fs::copy_file(o.tokenizer_model, model, fs::copy_options::overwrite_existing);
  }
  return loco::data::Tokenizer::load_sentencepiece(model);
}

void prepare_dataset(const Options& o) {
  if (o.input.empty())
    throw loco::Error(loco::ErrorCategory::config, "--out-dir needs --input FILE (a text file)");
  std::filesystem::create_directories(o.out_dir);
  const loco::data::Tokenizer tokenizer = dataset_tokenizer(o);
  const auto prepared = loco::data::prepare_dataset(
      o.input, o.out_dir, tokenizer,
      {.validation_fraction = o.val_fraction, .shard_tokens = o.shard_tokens});
  const loco::data::DatasetManifest& m = prepared.manifest;
  std::uint64_t validation_tokens = 0;
  for (const auto& shard : m.validation) validation_tokens += shard.tokens;
  std::printf("train: %llu tokens in %zu shards\nval: %llu tokens in %zu shards\nvocab: %u\n",
              static_cast<unsigned long long>(m.train_tokens()), m.train.size(),
              static_cast<unsigned long long>(validation_tokens), m.validation.size(), m.vocab);
  const std::string manifest =
      (std::filesystem::path(o.out_dir) / loco::data::kManifestName).string();
  const std::string hash = loco::to_hex(prepared.manifest_digest);
  std::printf(
      "manifest: %s\nmanifest-hash: %s\n\nIn the run config:\n[data]\nsource = \"dataset\"\n"
      "manifest = \"%s\"\nmanifest-hash = \"%s\"\n",
      manifest.c_str(), hash.c_str(), manifest.c_str(), hash.c_str());
}

void prepare_markov(const Options& o) {
  const loco::data::MarkovSource source(o.markov);
  // Training and validation sequences come from separate streams of the same seed.
  const auto train = source.generate(o.markov_train_tokens, loco::counter_u64(o.markov.seed, 1, 0));
  loco::data::write_token_file(o.train_out, train);
  const auto val = source.generate(o.markov_val_tokens, loco::counter_u64(o.markov.seed, 2, 0));
  loco::data::write_token_file(o.val_out, val);
  std::printf("train: %zu tokens -> %s\nval: %zu tokens -> %s\nvocab: %u\n", train.size(),
              o.train_out.c_str(), val.size(), o.val_out.c_str(), o.markov.vocab_size);
  std::printf("entropy_rate_nats: %.6f\n", source.entropy_rate());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "loco-prepare: writes token files (uint16, nanoGPT layout) or a dataset (checked shards and "
      "a manifest) for loco-train and loco-peer"};
  app.name("loco-prepare");
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  Options options;
  add_options(app, options);
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;

  try {
    loco::init_logging(common.log_level, common.log_format);
    if (!options.out_dir.empty()) {
      if (options.source != "text")
        throw loco::Error(loco::ErrorCategory::config,
                          "--out-dir takes a text file (--source text)");
      prepare_dataset(options);
    } else if (options.train_out.empty() || options.val_out.empty()) {
      throw loco::Error(loco::ErrorCategory::config,
                        "give --train-out and --val-out (token files), or --out-dir (a dataset)");
    } else if (options.source == "text") {
      prepare_text(options);
    } else {
      prepare_markov(options);
    }
  } catch (const loco::Error& e) {
    spdlog::error("loco-prepare: {}", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {  // the dataset's folder, the model's copy
    spdlog::error("loco-prepare: {}", e.what());
    return 1;
  }
  return 0;
}
