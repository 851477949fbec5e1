#include "loco/data/dataset_manifest.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include "loco/core/error.hpp"
#include "loco/data/batch_sampler.hpp"

namespace loco::data {
namespace {

constexpr std::string_view kManifestMagic = "loco-dataset/1";
constexpr std::size_t kMaxFileName = 100;

// Reads the manifest field by field; fail() names the line it is on.
class ManifestReader {
 public:
  explicit ManifestReader(std::string_view text) : rest_(text) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw Error(ErrorCategory::format,
                "dataset manifest, line " + std::to_string(line_) + ": " + std::string(what));
  }
  bool at(std::string_view literal) const { return rest_.starts_with(literal); }
  void expect(std::string_view literal) {
    if (!at(literal)) fail("expected '" + std::string(literal) + "'");
    rest_.remove_prefix(literal.size());
  }
  void end_line() {
    expect("\n");
    ++line_;
  }
  bool done() const { return rest_.empty(); }

  std::uint64_t number(std::string_view field, std::uint64_t max) {
    expect(field);
    expect("=");
    std::size_t digits = 0;
    while (digits < rest_.size() && rest_[digits] >= '0' && rest_[digits] <= '9') ++digits;
    if (digits == 0 || (digits > 1 && rest_[0] == '0'))
      fail("'" + std::string(field) + "' is not a plain decimal number");
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(rest_.data(), rest_.data() + digits, value);
    if (ec != std::errc() || value > max) fail("'" + std::string(field) + "' is too large");
    rest_.remove_prefix(digits);
    return value;
  }

  std::string name() {
    expect("name=");
    std::size_t n = 0;
    const auto allowed = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    };
    while (n < rest_.size() && allowed(rest_[n])) ++n;
    if (n == 0 || n > kMaxFileName || rest_[0] == '.')
      fail("a file name is 1 to 100 of [A-Za-z0-9._-], not starting with '.'");
    std::string out(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return out;
  }

  Digest digest() {
    expect("blake2b=");
    Digest d{};
    if (rest_.size() < 2 * d.size()) fail("'blake2b' is not 64 lowercase hex digits");
    for (std::size_t i = 0; i < 2 * d.size(); ++i) {
      const char c = rest_[i];
      const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (v < 0) fail("'blake2b' is not 64 lowercase hex digits");
      d[i / 2] = static_cast<std::uint8_t>(d[i / 2] << 4 | v);
    }
    rest_.remove_prefix(2 * d.size());
    return d;
  }

  // name=N [tokens=T] bytes=B blake2b=H
  DatasetFile file(bool with_tokens) {
    DatasetFile f;
    f.name = name();
    expect(" ");
    if (with_tokens) {
      f.tokens = number("tokens", kMaxShardTokens);
      expect(" ");
    }
    f.bytes = number("bytes", std::numeric_limits<std::uint64_t>::max());
    expect(" ");
    f.blake2b = digest();
    return f;
  }

 private:
  std::string_view rest_;
  std::size_t line_ = 1;
};

std::string file_fields(const DatasetFile& f, bool with_tokens) {
  std::string s = "name=" + f.name;
  if (with_tokens) s += " tokens=" + std::to_string(f.tokens);
  return s + " bytes=" + std::to_string(f.bytes) + " blake2b=" + to_hex(f.blake2b);
}

// The rules a split's shards follow, checked after the whole manifest is read.
void check_split(const DatasetManifest& m, const std::vector<DatasetFile>& split,
                 std::string_view kind) {
  const std::string where = "dataset manifest: " + std::string(kind) + " shard ";
  if (split.empty())
    throw Error(ErrorCategory::format, "dataset manifest has no " + std::string(kind) + " shard");
  for (std::size_t i = 0; i < split.size(); ++i) {
    const DatasetFile& s = split[i];
    const bool last = i + 1 == split.size();
    if (s.tokens == 0 || s.tokens > m.shard_tokens || (!last && s.tokens != m.shard_tokens))
      throw Error(ErrorCategory::format,
                  where + "'" + s.name + "' holds " + std::to_string(s.tokens) +
                      " tokens: every shard but the last holds shard-tokens (" +
                      std::to_string(m.shard_tokens) + "), the last 1 to that many");
    if (s.bytes != s.tokens * m.token_bytes)
      throw Error(ErrorCategory::format, where + "'" + s.name + "': bytes is not tokens × " +
                                             std::to_string(m.token_bytes));
  }
}

void check_manifest(const DatasetManifest& m) {
  if (m.tokenizer == "bytes" && m.vocab != 256)
    throw Error(ErrorCategory::format, "dataset manifest: a byte tokenizer has vocab 256");
  if (m.vocab < 2) throw Error(ErrorCategory::format, "dataset manifest: vocab is at least 2");
  if (m.token_bytes != (m.vocab <= 65536 ? 2u : 4u))
    throw Error(ErrorCategory::format,
                "dataset manifest: token-bytes is 2 for a vocab of at most 65536, else 4");
  if (m.shard_tokens == 0)
    throw Error(ErrorCategory::format, "dataset manifest: shard-tokens is at least 1");
  check_split(m, m.train, "train");
  check_split(m, m.validation, "val");
  std::set<std::string_view> names;
  if (m.tokenizer == "sentencepiece") names.insert(m.tokenizer_model.name);
  for (const auto* split : {&m.train, &m.validation})
    for (const DatasetFile& f : *split)
      if (!names.insert(f.name).second)
        throw Error(ErrorCategory::format, "dataset manifest names '" + f.name + "' twice");
}

}  // namespace

std::uint64_t DatasetManifest::train_tokens() const {
  std::uint64_t n = 0;
  for (const DatasetFile& f : train) n += f.tokens;
  return n;
}

std::string encode_manifest(const DatasetManifest& m) {
  std::string s = std::string(kManifestMagic) + "\n";
  s += "tokenizer=" + m.tokenizer;
  if (m.tokenizer == "sentencepiece") s += " " + file_fields(m.tokenizer_model, false);
  s += "\nvocab=" + std::to_string(m.vocab) + " token-bytes=" + std::to_string(m.token_bytes) +
       " shard-tokens=" + std::to_string(m.shard_tokens) + "\n";
  for (const DatasetFile& f : m.train) s += "train " + file_fields(f, true) + "\n";
  for (const DatasetFile& f : m.validation) s += "val " + file_fields(f, true) + "\n";
  return s;
}

DatasetManifest decode_manifest(std::string_view text) {
  if (text.size() > kMaxManifestBytes)
    throw Error(ErrorCategory::format, "dataset manifest is larger than any loco reads");
  // Shards are one line each: count them before anything grows with the input.
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  if (lines > kMaxDatasetShards + 3)
    throw Error(ErrorCategory::format, "dataset manifest lists more than " +
                                           std::to_string(kMaxDatasetShards) + " shards");
  ManifestReader in(text);
  DatasetManifest m;
  in.expect(kManifestMagic);
  in.end_line();
  in.expect("tokenizer=");
  if (in.at("bytes")) {
    in.expect("bytes");
  } else {
    in.expect("sentencepiece ");
    m.tokenizer = "sentencepiece";
    m.tokenizer_model = in.file(false);
  }
  in.end_line();
  m.vocab =
      static_cast<std::uint32_t>(in.number("vocab", std::numeric_limits<std::uint32_t>::max()));
  in.expect(" ");
  m.token_bytes = static_cast<std::uint32_t>(in.number("token-bytes", 4));
  in.expect(" ");
  m.shard_tokens = in.number("shard-tokens", kMaxShardTokens);
  in.end_line();
  while (in.at("train ")) {
    in.expect("train ");
    m.train.push_back(in.file(true));
    in.end_line();
  }
  while (in.at("val ")) {
    in.expect("val ");
    m.validation.push_back(in.file(true));
    in.end_line();
  }
  if (!in.done()) in.fail("expected a 'train' or 'val' line, or the end");
  check_manifest(m);
  return m;
}

ShardSpan train_shards_of(const DatasetManifest& m, ShardSpec shard) {
  const TokenRange range = shard_range(m.train_tokens(), shard);
  if (range.begin == range.end) return {};
  // Every shard but the last holds exactly shard_tokens tokens.
  return {static_cast<std::size_t>(range.begin / m.shard_tokens),
          static_cast<std::size_t>((range.end + m.shard_tokens - 1) / m.shard_tokens)};
}

}  // namespace loco::data
