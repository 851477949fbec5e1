#include "loco/train/corpus.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/data/markov_source.hpp"

namespace loco::train {

Corpus::Corpus(const DataSection& config, std::uint32_t vocab) {
  if (config.source == "markov") {
    data::MarkovConfig markov = config.markov;
    markov.vocab_size = vocab;
    const data::MarkovSource source(markov);
    // Two independent sequences of the same chain: different start states and draws.
    generated_train_ = source.generate(config.markov_train_tokens, 1);
    generated_validation_ = source.generate(config.markov_val_tokens, 2);
    train_ = generated_train_;
    validation_ = generated_validation_;
    entropy_floor_ = source.entropy_rate();
  } else if (config.source == "files") {
    if (config.train_file.empty() || config.val_file.empty()) {
      throw Error(ErrorCategory::config,
                  "data.source = files needs data.train-file and data.val-file (make them with "
                  "loco-prepare)");
    }
    train_file_.emplace(config.train_file, vocab);
    validation_file_.emplace(config.val_file, vocab);
    train_ = train_file_->tokens();
    validation_ = validation_file_->tokens();
    content_identity_ = fmt::format("data.train-tokens={}\ndata.val-tokens={}\n",
                                    to_hex(blake2b(std::as_bytes(train_))),
                                    to_hex(blake2b(std::as_bytes(validation_))));
  } else {
    throw Error(ErrorCategory::config,
                "data.source must be 'markov' or 'files', not '" + config.source + "'");
  }
}

std::string checkpoint_identity(const TrainConfig& config, const Corpus& corpus) {
  return config.identity() + corpus.content_identity();
}

}  // namespace loco::train
