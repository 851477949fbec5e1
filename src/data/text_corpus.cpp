#include "loco/data/text_corpus.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "loco/core/error.hpp"

namespace loco::data {
namespace {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

File open_file(const std::filesystem::path& path, const char* mode, const char* what) {
  File file(std::fopen(path.c_str(), mode), &std::fclose);
  if (!file) {
    throw Error(ErrorCategory::io, std::string("cannot ") + what + " '" + path.string() +
                                       "': " + std::strerror(errno));
  }
  return file;
}

// Copies `count` bytes of `in` into `out_path` as uint16 tokens, one per byte.
void write_bytes_as_tokens(std::FILE* in, const std::filesystem::path& in_path, std::uint64_t count,
                           const std::filesystem::path& out_path) {
  constexpr std::size_t kChunk = 1 << 20;
  File out = open_file(out_path, "wb", "create token file");
  std::vector<unsigned char> bytes(kChunk);
  std::vector<std::uint16_t> tokens(kChunk);
  while (count > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(count, kChunk));
    if (std::fread(bytes.data(), 1, want, in) != want) {
      throw Error(ErrorCategory::io,
                  "cannot read '" + in_path.string() + "' (changed while read?)");
    }
    std::copy_n(bytes.begin(), want, tokens.begin());
    if (std::fwrite(tokens.data(), 2, want, out.get()) != want) {
      throw Error(ErrorCategory::io,
                  "cannot write '" + out_path.string() + "': " + std::strerror(errno));
    }
    count -= want;
  }
  if (std::fclose(out.release()) != 0) {
    throw Error(ErrorCategory::io,
                "cannot close '" + out_path.string() + "': " + std::strerror(errno));
  }
}

}  // namespace

PreparedCounts prepare_text_corpus(const std::filesystem::path& text,
                                   const std::filesystem::path& train_out,
                                   const std::filesystem::path& validation_out,
                                   double validation_fraction) {
  if (!(validation_fraction > 0.0 && validation_fraction < 1.0)) {
    throw Error(ErrorCategory::invalid_argument, "validation fraction must be in (0, 1)");
  }
  File in = open_file(text, "rb", "open text file");
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(text, ec);
  if (ec) throw Error(ErrorCategory::io, "cannot size '" + text.string() + "': " + ec.message());

  PreparedCounts counts;
  counts.validation_tokens = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::floor(static_cast<double>(size) * validation_fraction)));
  if (counts.validation_tokens >= size) {
    throw Error(ErrorCategory::format, "text file '" + text.string() + "' has " +
                                           std::to_string(size) +
                                           " bytes: too few for a training and a validation set");
  }
  counts.train_tokens = size - counts.validation_tokens;
  write_bytes_as_tokens(in.get(), text, counts.train_tokens, train_out);
  write_bytes_as_tokens(in.get(), text, counts.validation_tokens, validation_out);
  return counts;
}

}  // namespace loco::data
