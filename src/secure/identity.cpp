#include "loco/secure/identity.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/sodium_init.hpp"

namespace loco::secure {
namespace {

constexpr std::string_view kHeader = "loco-ed25519-key v1";
constexpr std::size_t kMaxKeyFileBytes = 4096;  // a valid file has 173 bytes

// Parses exactly 2 * out.size() hex digits; returns false on anything else.
bool parse_hex(std::string_view hex, std::span<std::uint8_t> out) {
  if (hex.size() != 2 * out.size()) return false;
  std::size_t written = 0;
  const char* end = nullptr;
  return sodium_hex2bin(out.data(), out.size(), hex.data(), hex.size(), nullptr, &written, &end) ==
             0 &&
         written == out.size() && end == hex.data() + hex.size();
}

std::string hex(std::span<const std::uint8_t> bytes) {
  return loco::to_hex(bytes);
}

[[noreturn]] void bad_format(const std::filesystem::path& path, std::string_view what) {
  throw Error(ErrorCategory::config,
              fmt::format("key file {} is not a loco key file ({}); make a new one with "
                          "'loco-peer keygen --out FILE'",
                          path.string(), what));
}

}  // namespace

PeerId peer_id(const PublicKey& key) {
  Blake2b hasher;
  constexpr std::string_view kDomain = "loco-peer-id";
  hasher.update(std::as_bytes(std::span(kDomain)));
  hasher.update(std::as_bytes(std::span(key.bytes)));
  return PeerId{hasher.finish()};
}

std::string to_hex(const PublicKey& key) {
  return hex(key.bytes);
}
std::string full_hex(const PeerId& id) {
  return hex(id.bytes);
}
std::string short_id(const PeerId& id) {
  return hex(std::span(id.bytes).first(6));
}
std::string short_id(const PublicKey& key) {
  return short_id(peer_id(key));
}

PublicKey parse_public_key(std::string_view text) {
  PublicKey key;
  if (!parse_hex(text, key.bytes))
    throw Error(ErrorCategory::config,
                fmt::format("'{}' is not a public key: expected 64 hex digits (as printed by "
                            "'keygen')",
                            text));
  return key;
}

KeyPair KeyPair::generate() {
  ensure_sodium_initialized();
  std::array<std::uint8_t, 32> seed{};
  randombytes_buf(seed.data(), seed.size());
  KeyPair pair = from_seed(seed);
  sodium_memzero(seed.data(), seed.size());
  return pair;
}

KeyPair KeyPair::from_seed(std::span<const std::uint8_t, 32> seed) {
  ensure_sodium_initialized();
  KeyPair pair;
  crypto_sign_seed_keypair(pair.public_.bytes.data(), pair.secret_.data(), seed.data());
  return pair;
}

KeyPair::KeyPair(const KeyPair& other) = default;
KeyPair& KeyPair::operator=(const KeyPair& other) = default;
KeyPair::~KeyPair() {
  sodium_memzero(secret_.data(), secret_.size());
}

Signature KeyPair::sign(std::span<const std::uint8_t> message) const {
  Signature signature{};
  crypto_sign_detached(signature.data(), nullptr, message.data(), message.size(), secret_.data());
  return signature;
}

bool verify(const PublicKey& key, std::span<const std::uint8_t> message,
            const Signature& signature) {
  ensure_sodium_initialized();
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(),
                                     key.bytes.data()) == 0;
}

void write_key_file(const std::filesystem::path& path, const KeyPair& key, bool overwrite) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0)
    throw Error(ErrorCategory::io,
                fmt::format("cannot create key file {}: {}{}", path.string(), std::strerror(errno),
                            errno == EEXIST ? " (use --force to replace it)" : ""));
  // An existing file kept its old mode under O_TRUNC: tighten it before writing the secret.
  if (::fchmod(fd, 0600) != 0) {
    ::close(fd);
    throw Error(ErrorCategory::io,
                fmt::format("cannot set mode 0600 on key file {}", path.string()));
  }
  std::array<std::uint8_t, 32> seed{};
  crypto_sign_ed25519_sk_to_seed(seed.data(), key.secret_.data());
  std::string text =
      fmt::format("{}\npublic {}\nseed {}\n", kHeader, to_hex(key.public_key()), hex(seed));
  sodium_memzero(seed.data(), seed.size());
  const auto written = ::write(fd, text.data(), text.size());
  sodium_memzero(text.data(), text.size());
  const bool ok = written == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw Error(ErrorCategory::io, fmt::format("cannot write key file {}", path.string()));
}

KeyPair read_key_file(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw Error(ErrorCategory::io,
                fmt::format("cannot read key file {}: {}", path.string(), std::strerror(errno)));
  if (!S_ISREG(info.st_mode)) bad_format(path, "not a regular file");
  if ((info.st_mode & 077) != 0)
    throw Error(ErrorCategory::config,
                fmt::format("key file {} has mode {:04o}: group or others can access it; run "
                            "'chmod 600 {}' (or make a new key)",
                            path.string(), info.st_mode & 07777, path.string()));
  if (static_cast<std::size_t>(info.st_size) > kMaxKeyFileBytes) bad_format(path, "too large");

  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCategory::io, fmt::format("cannot open key file {}", path.string()));
  std::string line;
  std::string lines[3];
  for (auto& l : lines) {
    if (!std::getline(in, l)) bad_format(path, "fewer than three lines");
  }
  if (std::getline(in, line) && !line.empty()) bad_format(path, "text after the third line");
  if (lines[0] != kHeader) bad_format(path, "first line is not 'loco-ed25519-key v1'");
  const std::string_view public_line = lines[1];
  const std::string_view seed_line = lines[2];
  if (!public_line.starts_with("public ")) bad_format(path, "second line is not 'public <hex>'");
  if (!seed_line.starts_with("seed ")) bad_format(path, "third line is not 'seed <hex>'");

  PublicKey stated;
  if (!parse_hex(public_line.substr(7), stated.bytes)) bad_format(path, "bad public key digits");
  std::array<std::uint8_t, 32> seed{};
  const bool seed_ok = parse_hex(seed_line.substr(5), seed);
  sodium_memzero(lines[2].data(), lines[2].size());
  if (!seed_ok) bad_format(path, "bad seed digits");
  KeyPair pair = KeyPair::from_seed(seed);
  sodium_memzero(seed.data(), seed.size());
  if (pair.public_key() != stated) bad_format(path, "the public key does not match the seed");
  return pair;
}

}  // namespace loco::secure
