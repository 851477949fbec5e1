#pragma once
// The training and validation tokens of a run, from the synthetic Markov source (generated in
// memory, with its exact entropy rate) or from token files (memory-mapped).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loco/data/token_file.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

class Corpus {
 public:
  // Generates or opens the tokens `config.data` describes, for `vocab` tokens. Throws the data
  // module's errors (a missing file, a token ≥ vocab, ...).
  Corpus(const DataSection& config, std::uint32_t vocab);

  std::span<const std::uint16_t> train() const { return train_; }
  std::span<const std::uint16_t> validation() const { return validation_; }
  // The best achievable loss in nats per token, when the source is known (Markov).
  std::optional<double> entropy_floor() const { return entropy_floor_; }
  // Token files: lines naming the BLAKE2b of each file's tokens (read once, at construction, at
  // about 1 GB/s). Empty for the Markov source, which its options fix.
  const std::string& content_identity() const { return content_identity_; }

 private:
  std::vector<std::uint16_t> generated_train_, generated_validation_;
  std::optional<data::TokenFile> train_file_, validation_file_;
  std::span<const std::uint16_t> train_, validation_;
  std::optional<double> entropy_floor_;
  std::string content_identity_;
};

// What a checkpoint of this run is saved and resumed under: the options that fix its layout and
// data stream (TrainConfig::identity) and the data by content, so other tokens at the same path
// are refused and the same tokens at another path resume.
std::string checkpoint_identity(const TrainConfig& config, const Corpus& corpus);

}  // namespace loco::train
