// loco-prepare: writes the token files loco-train reads (docs/FORMATS.md).
//
//   loco-prepare --input book.txt --train-out train.bin --val-out val.bin [--val-fraction 0.1]
//       byte-level tokens of a text file, split into training and validation sets
//   loco-prepare --source markov --markov.vocab 64 ... --train-out train.bin --val-out val.bin
//       a synthetic Markov corpus; prints its entropy rate (the best achievable loss)

#include <spdlog/spdlog.h>

#include <cstdio>

#include "loco/cli/app.hpp"
#include "loco/core/error.hpp"
#include "loco/core/log.hpp"
#include "loco/core/rng.hpp"
#include "loco/data/markov_source.hpp"
#include "loco/data/text_corpus.hpp"
#include "loco/data/token_file.hpp"

namespace {

struct Options {
  std::string source = "text";
  std::string input;
  std::string train_out;
  std::string val_out;
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
  loco::cli::add_path_option(app, "--train-out", o.train_out, "Training token file to write")
      ->required();
  loco::cli::add_path_option(app, "--val-out", o.val_out, "Validation token file to write")
      ->required();
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
  CLI::App app{"loco-prepare: writes token files (uint16, nanoGPT layout) for loco-train"};
  app.name("loco-prepare");
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  Options options;
  add_options(app, options);
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;

  try {
    loco::init_logging(common.log_level, common.log_format);
    if (options.source == "text") {
      prepare_text(options);
    } else {
      prepare_markov(options);
    }
  } catch (const loco::Error& e) {
    spdlog::error("loco-prepare: {}", e.what());
    return 1;
  }
  return 0;
}
