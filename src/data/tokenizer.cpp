#include "loco/data/tokenizer.hpp"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdio>
#include <fstream>
#include <unordered_map>

#include "loco/core/error.hpp"
#include "read_capped.hpp"

namespace loco::data {

namespace {
constexpr std::uint64_t kMaxModelBytes = 64ull << 20;

// The text's lines, for SentencePiece's trainer. Given the lines rather than the file's path, it
// records no path in the model: the same text trains the same model bytes wherever it lies, so
// two organisers (or one, twice) get the same tokenizer hash and dataset manifest.
class TextLines final : public sentencepiece::SentenceIterator {
 public:
  explicit TextLines(const std::filesystem::path& text) : in_(text, std::ios::binary) {
    if (!in_) throw Error(ErrorCategory::io, "cannot read '" + text.string() + "'");
    Next();
  }
  bool done() const override { return done_; }
  void Next() override {
    done_ = !std::getline(in_, line_);
    if (!done_ && !line_.empty() && line_.back() == '\r') line_.pop_back();  // as its reader
  }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override {
    return in_.bad() ? sentencepiece::util::Status(sentencepiece::util::StatusCode::kDataLoss,
                                                   "a read of the text failed")
                     : sentencepiece::util::Status();
  }

 private:
  std::ifstream in_;
  std::string line_;
  bool done_ = false;
};

}  // namespace

struct Tokenizer::Model {
  sentencepiece::SentencePieceProcessor processor;
};

Tokenizer::Tokenizer(std::unique_ptr<Model> model, const Digest& digest)
    : model_(std::move(model)), digest_(digest) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Tokenizer Tokenizer::bytes() {
  return Tokenizer(nullptr, Digest{});
}

Tokenizer Tokenizer::load_sentencepiece(const std::filesystem::path& model) {
  // Parsed from the bytes that were hashed: the digest names exactly the model in use.
  const std::string bytes = read_capped(model, kMaxModelBytes, "SentencePiece model");
  auto loaded = std::make_unique<Model>();
  const auto status = loaded->processor.LoadFromSerializedProto(bytes);
  if (!status.ok())
    throw Error(ErrorCategory::format,
                "'" + model.string() + "' is not a SentencePiece model: " + status.ToString());
  return Tokenizer(std::move(loaded), blake2b(std::as_bytes(std::span(bytes))));
}

std::uint32_t Tokenizer::vocab_size() const {
  return model_ ? static_cast<std::uint32_t>(model_->processor.GetPieceSize()) : 256;
}

void Tokenizer::encode(std::string_view text, std::vector<std::uint32_t>& out) const {
  if (!model_) {
    for (char c : text) out.push_back(static_cast<unsigned char>(c));
    return;
  }
  std::vector<int> ids;
  const auto status = model_->processor.Encode(std::string(text), &ids);
  if (!status.ok())
    throw Error(ErrorCategory::format, "SentencePiece cannot encode: " + status.ToString());
  for (int id : ids) out.push_back(static_cast<std::uint32_t>(id));
}

std::string Tokenizer::decode(std::span<const std::uint32_t> tokens) const {
  std::string text;
  if (!model_) {
    for (std::uint32_t t : tokens) text.push_back(t < 256 ? static_cast<char>(t) : '?');
    return text;
  }
  const int unknown = model_->processor.unk_id();
  std::vector<int> ids;
  for (std::uint32_t t : tokens) ids.push_back(t < vocab_size() ? static_cast<int>(t) : unknown);
  const auto status = model_->processor.Decode(ids, &text);
  if (!status.ok())
    throw Error(ErrorCategory::format, "SentencePiece cannot decode: " + status.ToString());
  return text;
}

void train_sentencepiece(const std::filesystem::path& text, const std::filesystem::path& model_out,
                         const SentencePieceOptions& options) {
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", options.type},
      {"vocab_size", std::to_string(options.vocab)},
      {"input_sentence_size", std::to_string(options.max_lines)},
      {"shuffle_input_sentence", "true"},
      {"character_coverage", "0.9995"},
      {"byte_fallback", "true"},  // characters left out of the vocabulary still encode
      {"minloglevel", "2"},       // SentencePiece's progress lines are not loco's log
  };
  // The lines sampled when the text has more than max_lines: the same ones every time (the
  // seed is SentencePiece's, for the whole process; loco-prepare trains once).
  sentencepiece::SetRandomGeneratorSeed(1);
  TextLines lines(text);
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &lines, &model);
  if (!status.ok())
    throw Error(ErrorCategory::format,
                "SentencePiece cannot train on '" + text.string() + "': " + status.ToString());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(model_out.c_str(), "wb"),
                                                       &std::fclose);
  if (!file || std::fwrite(model.data(), 1, model.size(), file.get()) != model.size() ||
      std::fclose(file.release()) != 0)
    throw Error(ErrorCategory::io, "cannot write SentencePiece model '" + model_out.string() + "'");
}

std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out.push_back(static_cast<char>(c));  // UTF-8 passes through; the log is UTF-8
    }
  }
  return out;
}

}  // namespace loco::data
