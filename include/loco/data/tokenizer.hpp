#pragma once
// Text to tokens and back. Two kinds:
// - bytes: every byte of the text is one token (0..255); no model file. loco's default, and what
//   `[data] source = "files"` token files made by `loco-prepare --input` hold.
// - sentencepiece: a SentencePiece model (BPE or unigram; Debian's libsentencepiece), trained by
//   loco-prepare (train_sentencepiece) or brought by the organiser. Its file is part of a dataset
//   (dataset_manifest.hpp): the manifest names it by its BLAKE2b-256, and load() hashes the very
//   bytes it parses.
// SentencePiece encodes a line at a time: a newline becomes a word boundary, not a token.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/core/hash.hpp"

namespace loco::data {

class Tokenizer {
 public:
  static Tokenizer bytes();
  // Reads and parses a SentencePiece model file. Throws Error(io) when it cannot be read,
  // Error(format) when it is larger than 64 MB or not a SentencePiece model.
  static Tokenizer load_sentencepiece(const std::filesystem::path& model);

  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  bool is_bytes() const { return model_ == nullptr; }
  std::uint32_t vocab_size() const;
  // The model file's BLAKE2b-256 (sentencepiece only).
  const Digest& model_digest() const { return digest_; }

  // Appends the tokens of `text` to `out`.
  void encode(std::string_view text, std::vector<std::uint32_t>& out) const;
  // The text of `tokens`. A token outside the vocabulary decodes as '?' (bytes) or as
  // SentencePiece's unknown piece.
  std::string decode(std::span<const std::uint32_t> tokens) const;

 private:
  struct Model;
  explicit Tokenizer(std::unique_ptr<Model> model, const Digest& digest);
  std::unique_ptr<Model> model_;  // null: bytes
  Digest digest_{};
};

struct SentencePieceOptions {
  std::uint32_t vocab = 8000;
  std::string type = "bpe";             // or "unigram"
  std::uint64_t max_lines = 2'000'000;  // lines sampled from the text for training
};

// Trains a SentencePiece model on the lines of `text` and writes it to `model_out`. Rare
// characters fall back to byte tokens, so every text encodes. Throws Error(format) with
// SentencePiece's reason when it refuses (e.g. too little text for the vocabulary), Error(io)
// when the model cannot be written.
void train_sentencepiece(const std::filesystem::path& text, const std::filesystem::path& model_out,
                         const SentencePieceOptions& options);

// `text` with its control characters written as \n or \xNN: fit for one log line.
std::string printable(std::string_view text);

}  // namespace loco::data
