#include "loco/data/dataset_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "loco/core/error.hpp"

namespace loco::data {
namespace {

void write_whole_file(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"),
                                                       &std::fclose);
  if (!file || std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size() ||
      std::fclose(file.release()) != 0)
    throw Error(ErrorCategory::io, "cannot write '" + path.string() + "': " + std::strerror(errno));
}

}  // namespace

ShardWriter::ShardWriter(std::filesystem::path folder, std::string prefix,
                         std::uint64_t shard_tokens, std::uint32_t token_bytes)
    : folder_(std::move(folder)),
      prefix_(std::move(prefix)),
      shard_tokens_(shard_tokens),
      token_bytes_(token_bytes) {
  if (shard_tokens_ == 0 || shard_tokens_ > kMaxShardTokens)
    throw Error(ErrorCategory::invalid_argument, "shard tokens must be in 1..2^32");
  if (token_bytes_ != 2 && token_bytes_ != 4)
    throw Error(ErrorCategory::invalid_argument, "tokens are 2 or 4 bytes");
}

void ShardWriter::append(std::span<const std::uint32_t> tokens) {
  for (std::uint32_t t : tokens) {
    for (std::uint32_t b = 0; b < token_bytes_; ++b)  // little-endian
      pending_.push_back(static_cast<std::uint8_t>(t >> (8 * b)));
    if (pending_.size() == shard_tokens_ * token_bytes_) flush();
  }
}

void ShardWriter::flush() {
  if (pending_.empty()) return;
  DatasetFile shard{.name = fmt::format("{}-{:05}.bin", prefix_, written_.size()),
                    .tokens = pending_.size() / token_bytes_,
                    .bytes = pending_.size(),
                    .blake2b = blake2b(std::as_bytes(std::span(pending_)))};
  write_whole_file(folder_ / shard.name, std::as_bytes(std::span(pending_)));
  written_.push_back(std::move(shard));
  pending_.clear();
}

std::vector<DatasetFile> ShardWriter::finish() {
  flush();
  return std::move(written_);
}

PreparedDataset prepare_dataset(const std::filesystem::path& text,
                                const std::filesystem::path& folder, const Tokenizer& tokenizer,
                                const DatasetOptions& options) {
  if (!(options.validation_fraction > 0.0 && options.validation_fraction < 1.0))
    throw Error(ErrorCategory::invalid_argument, "validation fraction must be in (0, 1)");
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(text, ec);
  if (ec) throw Error(ErrorCategory::io, "cannot size '" + text.string() + "': " + ec.message());
  std::ifstream in(text, std::ios::binary);
  if (!in) throw Error(ErrorCategory::io, "cannot open text file '" + text.string() + "'");

  PreparedDataset out;
  DatasetManifest& m = out.manifest;
  m.vocab = tokenizer.vocab_size();
  m.token_bytes = m.vocab <= 65536 ? 2 : 4;
  m.shard_tokens = options.shard_tokens;
  if (!tokenizer.is_bytes()) {
    m.tokenizer = "sentencepiece";
    const std::filesystem::path model = folder / kTokenizerModelName;
    m.tokenizer_model = {kTokenizerModelName, 0, std::filesystem::file_size(model),
                         tokenizer.model_digest()};
  }
  ShardWriter train(folder, "train", m.shard_tokens, m.token_bytes);
  ShardWriter validation(folder, "val", m.shard_tokens, m.token_bytes);
  const auto validation_bytes = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(
             std::floor(static_cast<double>(size) * options.validation_fraction)));
  const std::uint64_t split_at = size - std::min(size, validation_bytes);
  std::string line;
  std::vector<std::uint32_t> tokens;
  for (std::uint64_t offset = 0; std::getline(in, line);) {
    const std::uint64_t line_start = offset;
    const bool newline = !in.eof();
    offset += line.size() + (newline ? 1 : 0);
    if (tokenizer.is_bytes() && newline) line.push_back('\n');  // bytes keep every byte
    tokens.clear();
    tokenizer.encode(line, tokens);
    (line_start < split_at ? train : validation).append(tokens);
  }
  if (in.bad()) throw Error(ErrorCategory::io, "cannot read '" + text.string() + "'");
  m.train = train.finish();
  m.validation = validation.finish();
  if (m.train.empty() || m.validation.empty())
    throw Error(ErrorCategory::format,
                "text file '" + text.string() + "' leaves the " +
                    (m.train.empty() ? "training" : "validation") +
                    " split without tokens: use more text (or more lines), or another "
                    "--val-fraction");
  const std::string manifest = encode_manifest(m);
  write_whole_file(folder / kManifestName, std::as_bytes(std::span(manifest)));
  out.manifest_digest = blake2b(std::as_bytes(std::span(manifest)));
  return out;
}

}  // namespace loco::data
