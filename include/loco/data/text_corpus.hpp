#pragma once
// Byte-level tokenisation of a text file: every byte is one token (0..255), so the vocabulary
// is 256 and any file is valid input. The file is split once, in order: the first part is the
// training set, the last `validation_fraction` of the bytes the validation set (as nanoGPT).

#include <cstdint>
#include <filesystem>

namespace loco::data {

struct PreparedCounts {
  std::uint64_t train_tokens = 0;
  std::uint64_t validation_tokens = 0;
};

// Reads `text` in chunks and writes two token files. validation_fraction is in (0, 1); the
// validation set gets floor(size × fraction) tokens, but at least one. Throws Error(io) for an
// unreadable input or unwritable output, Error(format) for an input too short to give both files a
// token, Error(invalid_argument) for a bad fraction.
PreparedCounts prepare_text_corpus(const std::filesystem::path& text,
                                   const std::filesystem::path& train_out,
                                   const std::filesystem::path& validation_out,
                                   double validation_fraction);

}  // namespace loco::data
