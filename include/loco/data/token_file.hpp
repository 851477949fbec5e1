#pragma once
// Token files in nanoGPT's layout: a flat array of little-endian uint16 tokens, nothing else
// (docs/FORMATS.md). TokenFile maps one read-only and validates it when opened, so a training
// run fails at startup, not hours in.

#include <cstdint>
#include <filesystem>
#include <span>

namespace loco::data {

class TokenFile {
 public:
  // Maps `path` and checks every token. Throws Error(io) when the file cannot be opened or
  // mapped, Error(format) when it is empty, has an odd length, or holds a token ≥ vocab_size
  // (the message names the file and the token's position). vocab_size is in 1..65536.
  TokenFile(const std::filesystem::path& path, std::uint32_t vocab_size);
  ~TokenFile();
  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  std::span<const std::uint16_t> tokens() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void unmap() noexcept;

  std::filesystem::path path_;
  const std::uint16_t* data_ = nullptr;
  std::size_t size_ = 0;  // in tokens
};

// Writes `tokens` as a token file (replacing `path`). Throws Error(io) on failure.
void write_token_file(const std::filesystem::path& path, std::span<const std::uint16_t> tokens);

}  // namespace loco::data
