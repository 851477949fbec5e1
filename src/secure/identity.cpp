#include "loco/secure/identity.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>  // renameat2, RENAME_NOREPLACE
#include <cstring>
#include <string>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/sodium_init.hpp"

namespace loco::secure {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeader = "loco-ed25519-key v1";
constexpr std::string_view kPublicPrefix = "public ";
constexpr std::string_view kSeedPrefix = "seed ";
constexpr std::size_t kSeedBytes = 32;
// The three lines as write_key_file writes them, each ending in '\n'.
constexpr std::size_t kKeyFileBytes =
    kHeader.size() + 1 + kPublicPrefix.size() + 64 + 1 + kSeedPrefix.size() + 2 * kSeedBytes + 1;
constexpr std::size_t kMaxKeyFileBytes = 4096;

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

// Bytes that hold a seed or its hex digits. They live in memory from sodium_malloc (between guard
// pages, locked where the system allows it, never copied by a reallocation as a std::string's
// would be), and sodium_free wipes them however the scope is left, an exception included.
class SecretBuffer {
 public:
  explicit SecretBuffer(std::size_t capacity) : capacity_(capacity) {
    ensure_sodium_initialized();
    data_ = static_cast<std::uint8_t*>(sodium_malloc(capacity));
    if (data_ == nullptr)
      throw Error(ErrorCategory::resource, "cannot allocate protected memory for a secret key");
  }
  ~SecretBuffer() { sodium_free(data_); }
  SecretBuffer(const SecretBuffer&) = delete;
  SecretBuffer& operator=(const SecretBuffer&) = delete;

  std::span<std::uint8_t> unused() { return {data_ + size_, capacity_ - size_}; }
  void commit(std::size_t count) {  // the first `count` bytes of unused() now hold data
    LOCO_ASSERT(count <= capacity_ - size_, "secret buffer overrun");
    size_ += count;
  }
  void append(std::string_view text) {
    LOCO_ASSERT(text.size() <= capacity_ - size_, "secret buffer overrun");
    std::memcpy(data_ + size_, text.data(), text.size());
    size_ += text.size();
  }
  void append_hex(std::span<const std::uint8_t> bytes) {
    // sodium_bin2hex writes a terminating NUL after the digits; the next append overwrites it.
    const std::size_t room = capacity_ - size_;
    LOCO_ASSERT(2 * bytes.size() < room, "secret buffer overrun");
    sodium_bin2hex(reinterpret_cast<char*>(data_ + size_), room, bytes.data(), bytes.size());
    size_ += 2 * bytes.size();
  }

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  std::string_view text() const { return {reinterpret_cast<const char*>(data_), size_}; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

// Owns a file descriptor and closes it.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { ::close(fd_); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// ---- Messages ----

// How to make a new key for the file's owner, and what a new tracker key costs.
std::string new_key_hint(KeyOwner owner) {
  if (owner == KeyOwner::tracker)
    return "make a new one with 'loco-tracker keygen --out FILE', after which every peer must "
           "update its pinned [tracker] public-key";
  return "make a new one with 'loco-peer keygen --out FILE'";
}

[[noreturn]] void bad_format(const fs::path& path, KeyOwner owner, std::string_view what) {
  // The tracker's key is worth restoring: a new one breaks every peer's pin.
  const std::string_view restore =
      owner == KeyOwner::tracker ? "restore the tracker's key from its backup, or " : "";
  throw Error(ErrorCategory::config,
              fmt::format("key file {} is not a loco key file ({}); {}{}", path.string(), what,
                          restore, new_key_hint(owner)));
}

// "alice (uid 1000)", or "uid 1000" when the user database has no name for it.
std::string describe_user(uid_t uid) {
  passwd entry{};
  passwd* found = nullptr;
  std::array<char, 4096> strings{};
  if (::getpwuid_r(uid, &entry, strings.data(), strings.size(), &found) == 0 && found != nullptr)
    return fmt::format("{} (uid {})", found->pw_name, uid);
  return fmt::format("uid {}", uid);
}

// ---- Reading ----

[[noreturn]] void cannot_read(const fs::path& path, int error) {
  throw Error(ErrorCategory::io,
              fmt::format("cannot read key file {}: {}", path.string(), std::strerror(error)));
}

// One open serves both the checks and the read, so the file checked is the file read.
// O_NOFOLLOW: a link may point anywhere, and where it points can change after any check.
// O_NONBLOCK: opening a FIFO must not wait for a writer (fstat then refuses it).
FileDescriptor open_key_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) return FileDescriptor(fd);
  if (errno == ELOOP)
    throw Error(ErrorCategory::config,
                fmt::format("key file {} is a symbolic link: loco does not follow links to key "
                            "files; give the real path of the key file",
                            path.string()));
  cannot_read(path, errno);
}

// Refuses a key file that is not a regular file belonging to the user running loco, private to
// them, and of a plausible size.
void check_key_file(int fd, const fs::path& path, KeyOwner owner) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) cannot_read(path, errno);
  if (!S_ISREG(info.st_mode))
    throw Error(ErrorCategory::config,
                fmt::format("key file {} is not a regular file (it is a directory, FIFO, socket "
                            "or device); give the path of the key file itself",
                            path.string()));
  // Before the mode: another user's file cannot be fixed with chmod by us.
  if (info.st_uid != ::geteuid())
    throw Error(ErrorCategory::config,
                fmt::format("key file {} belongs to {}, but loco runs as {}: a key must belong "
                            "to the user running loco; run loco as its owner or chown the file",
                            path.string(), describe_user(info.st_uid), describe_user(::geteuid())));
  if ((info.st_mode & 077) != 0)
    throw Error(
        ErrorCategory::config,
        fmt::format("key file {} has mode {:04o}: group or others can access it; run "
                    "'chmod 600 {}' (or, if someone else may have read it, {})",
                    path.string(), info.st_mode & 07777, path.string(), new_key_hint(owner)));
  if (static_cast<std::size_t>(info.st_size) > kMaxKeyFileBytes)
    bad_format(path, owner, "larger than 4096 bytes");
}

// Reads to the end of the file. The size was checked, but the file may have grown since.
void read_key_text(int fd, SecretBuffer& text, const fs::path& path, KeyOwner owner) {
  for (;;) {
    const std::span<std::uint8_t> room = text.unused();
    if (room.empty()) bad_format(path, owner, "larger than 4096 bytes");
    const ssize_t count = ::read(fd, room.data(), room.size());
    if (count == 0) return;
    if (count > 0) {
      text.commit(static_cast<std::size_t>(count));
    } else if (errno != EINTR) {
      cannot_read(path, errno);
    }
  }
}

// Splits the first line off `rest` and returns it without its '\n' (the last line may lack one).
std::string_view take_line(std::string_view& rest) {
  const std::size_t end = rest.find('\n');
  const std::string_view line = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  return line;
}

// Parses the three lines. The seed's bytes go only into wiped memory, and `text` is not copied.
KeyPair parse_key_text(std::string_view text, const fs::path& path, KeyOwner owner) {
  std::string_view rest = text;
  std::array<std::string_view, 3> lines;
  for (auto& line : lines) {
    if (rest.empty()) bad_format(path, owner, "fewer than three lines");
    line = take_line(rest);
  }
  if (!rest.empty()) bad_format(path, owner, "text after the third line");
  if (lines[0] != kHeader) bad_format(path, owner, "first line is not 'loco-ed25519-key v1'");
  if (!lines[1].starts_with(kPublicPrefix))
    bad_format(path, owner, "second line is not 'public <hex>'");
  if (!lines[2].starts_with(kSeedPrefix)) bad_format(path, owner, "third line is not 'seed <hex>'");

  PublicKey stated;
  if (!parse_hex(lines[1].substr(kPublicPrefix.size()), stated.bytes))
    bad_format(path, owner, "bad public key digits");
  SecretBuffer seed(kSeedBytes);
  if (!parse_hex(lines[2].substr(kSeedPrefix.size()), seed.unused()))
    bad_format(path, owner, "bad seed digits");
  seed.commit(kSeedBytes);
  KeyPair pair = KeyPair::from_seed(seed.bytes().first<kSeedBytes>());
  if (pair.public_key() != stated)
    bad_format(path, owner, "the public key does not match the seed");
  return pair;
}

// ---- Writing ----

// The key file's text, built where it is wiped afterwards: the seed's digits never pass through
// a std::string.
void format_key_file(const PublicKey& public_key, std::span<const std::uint8_t> seed,
                     SecretBuffer& text) {
  text.append(kHeader);
  text.append("\n");
  text.append(kPublicPrefix);
  text.append_hex(public_key.bytes);
  text.append("\n");
  text.append(kSeedPrefix);
  text.append_hex(seed);
  text.append("\n");
}

[[noreturn]] void cannot_create(const fs::path& path, std::string_view what, int error) {
  throw Error(ErrorCategory::io, fmt::format("cannot create key file {}: {}: {}", path.string(),
                                             what, std::strerror(error)));
}

// The directory that will hold the key file. Every later step names files relative to this
// descriptor, so the temporary file and the rename cannot end up in different directories.
FileDescriptor open_parent_directory(const fs::path& path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;  // before formatting the message, which may change errno
    cannot_create(path, fmt::format("cannot open its directory {}", dir.string()), error);
  }
  return FileDescriptor(fd);
}

// A new file beside the key file that receives its text and is then renamed onto it; removed
// again if it is not renamed. Its name is unpredictable and it is created with O_EXCL, so nobody
// can prepare a file or link there in advance.
class TemporaryKeyFile {
 public:
  TemporaryKeyFile(int dir_fd, const fs::path& path)
      : dir_fd_(dir_fd), path_(path), name_(temporary_name(path)), fd_(create()) {}
  ~TemporaryKeyFile() {
    if (!placed_) ::unlinkat(dir_fd_, name_.c_str(), 0);
  }
  TemporaryKeyFile(const TemporaryKeyFile&) = delete;
  TemporaryKeyFile& operator=(const TemporaryKeyFile&) = delete;

  void write_and_sync(std::span<const std::uint8_t> bytes) {
    // The umask may have taken the owner's bits away: the mode is exactly 0600 whatever it is.
    if (::fchmod(fd_.get(), 0600) != 0) cannot_create(path_, "cannot set mode 0600", errno);
    while (!bytes.empty()) {
      const ssize_t count = ::write(fd_.get(), bytes.data(), bytes.size());
      if (count < 0 && errno == EINTR) continue;
      if (count < 0) cannot_create(path_, "cannot write", errno);
      bytes = bytes.subspan(static_cast<std::size_t>(count));
    }
    if (::fsync(fd_.get()) != 0) cannot_create(path_, "cannot sync", errno);
  }

  // Renames the file onto the key file's name. A rename replaces a symbolic link itself, never
  // its target. Without `overwrite` the kernel refuses atomically if the name exists, a dangling
  // link included, so there is no window between a check and the rename.
  void place(bool overwrite) {
    const std::string target = path_.filename().string();
    if (overwrite) {
      if (::renameat(dir_fd_, name_.c_str(), dir_fd_, target.c_str()) != 0)
        cannot_create(path_, "cannot rename the new file into place", errno);
    } else if (::renameat2(dir_fd_, name_.c_str(), dir_fd_, target.c_str(), RENAME_NOREPLACE) !=
               0) {
      // EINVAL: this filesystem has no RENAME_NOREPLACE (NFS, for one); link() refuses an
      // existing name just as atomically.
      if (errno != EINVAL || ::linkat(dir_fd_, name_.c_str(), dir_fd_, target.c_str(), 0) != 0)
        refuse_existing(errno);
      ::unlinkat(dir_fd_, name_.c_str(), 0);  // the key is in place under its own name already
    }
    placed_ = true;
  }

 private:
  static std::string temporary_name(const fs::path& path) {
    std::array<std::uint8_t, 8> random{};
    randombytes_buf(random.data(), random.size());
    return fmt::format(".{}.{}.tmp", path.filename().string(), hex(random));
  }

  FileDescriptor create() {
    const int fd = ::openat(dir_fd_, name_.c_str(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      const int error = errno;  // before formatting the message, which may change errno
      cannot_create(path_, fmt::format("cannot create temporary file {}", name_), error);
    }
    return FileDescriptor(fd);
  }

  [[noreturn]] void refuse_existing(int error) {
    if (error == EEXIST)
      throw Error(ErrorCategory::io,
                  fmt::format("cannot create key file {}: something already exists at that path "
                              "(a file or a symbolic link); use --force to replace it",
                              path_.string()));
    cannot_create(path_, "cannot move the new file into place", error);
  }

  int dir_fd_;
  const fs::path& path_;
  std::string name_;
  FileDescriptor fd_;
  bool placed_ = false;
};

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

void write_key_file(const fs::path& path, const KeyPair& key, bool overwrite) {
  if (!path.has_filename())
    throw Error(ErrorCategory::io,
                fmt::format("cannot create key file {}: the path names a directory; give a file "
                            "name",
                            path.string()));
  SecretBuffer text(kKeyFileBytes);
  {
    SecretBuffer seed(kSeedBytes);
    crypto_sign_ed25519_sk_to_seed(seed.unused().data(), key.secret_.data());
    seed.commit(kSeedBytes);
    format_key_file(key.public_key(), seed.bytes(), text);
  }
  const FileDescriptor dir = open_parent_directory(path);
  TemporaryKeyFile file(dir.get(), path);
  file.write_and_sync(text.bytes());
  file.place(overwrite);
  // The rename is durable only once the directory is synced.
  if (::fsync(dir.get()) != 0) cannot_create(path, "cannot sync its directory", errno);
}

KeyPair read_key_file(const fs::path& path, KeyOwner owner) {
  const FileDescriptor fd = open_key_file(path);
  check_key_file(fd.get(), path, owner);
  SecretBuffer text(kMaxKeyFileBytes + 1);  // one more byte tells a longer file at the end
  read_key_text(fd.get(), text, path, owner);
  return parse_key_text(text.text(), path, owner);
}

}  // namespace loco::secure
