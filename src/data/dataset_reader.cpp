#include "loco/data/dataset_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "loco/core/error.hpp"
#include "read_capped.hpp"

namespace loco::data {

static_assert(std::endian::native == std::endian::little, "shards are little-endian, read as is");

namespace {

[[noreturn]] void fail_shard(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCategory::format, "dataset shard '" + path.string() + "' " + what);
}

// A shard file opened and found to be exactly the manifest's size, so that a buffer of that size
// is allocated only for a file that fills it.
class SizedFile {
 public:
  SizedFile(const std::filesystem::path& path, std::uint64_t bytes) : path_(path), bytes_(bytes) {
    fd_.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_.fd < 0)
      throw Error(ErrorCategory::io,
                  "dataset shard '" + path.string() + "': cannot open: " + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd_.fd, &info) != 0 || !S_ISREG(info.st_mode))
      fail_shard(path, "is not a readable regular file");
    const auto size = static_cast<std::uint64_t>(info.st_size);
    if (size < bytes)
      fail_shard(path, "is " + std::to_string(size) + " bytes, the manifest says " +
                           std::to_string(bytes) +
                           ": truncated (an interrupted copy or download?)");
    if (size > bytes)
      fail_shard(path, "is " + std::to_string(size) + " bytes, the manifest says " +
                           std::to_string(bytes) + ": not this dataset's shard");
  }

  void read_all(void* out) const {
    auto* at = static_cast<char*>(out);
    for (std::uint64_t done = 0; done < bytes_;) {
      const ::ssize_t n = ::read(fd_.fd, at + done, bytes_ - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail_shard(path_, "could not be read to its end");
      done += static_cast<std::uint64_t>(n);
    }
  }

 private:
  std::filesystem::path path_;
  std::uint64_t bytes_;
  struct Fd {  // a member, so that a throwing constructor closes it too
    int fd = -1;
    Fd() = default;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  } fd_;
};

}  // namespace

std::vector<std::uint16_t> read_shard(const std::filesystem::path& folder,
                                      const DatasetManifest& manifest, const DatasetFile& shard) {
  const std::filesystem::path path = folder / shard.name;
  if (manifest.token_bytes != 2)
    fail_shard(path, "holds 4-byte tokens (a vocabulary of " + std::to_string(manifest.vocab) +
                         "); loco's models read at most 65536 tokens");
  const SizedFile file(path, shard.bytes);  // bytes = 2 × tokens (decode_manifest)
  std::vector<std::uint16_t> tokens(shard.tokens);
  file.read_all(tokens.data());
  if (blake2b(std::as_bytes(std::span(tokens))) != shard.blake2b)
    fail_shard(path,
               "fails its BLAKE2b check: corrupted, or another dataset's; delete it and "
               "copy it again");
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] >= manifest.vocab)
      fail_shard(path, "holds token " + std::to_string(tokens[i]) + " at position " +
                           std::to_string(i) + ", outside the vocabulary of " +
                           std::to_string(manifest.vocab));
  return tokens;
}

Tokenizer read_tokenizer(const std::filesystem::path& folder, const DatasetManifest& manifest) {
  if (manifest.tokenizer == "bytes") return Tokenizer::bytes();
  const std::filesystem::path path = folder / manifest.tokenizer_model.name;
  Tokenizer tokenizer = Tokenizer::load_sentencepiece(path);
  if (tokenizer.model_digest() != manifest.tokenizer_model.blake2b)
    throw Error(ErrorCategory::format, "tokenizer model '" + path.string() +
                                           "' fails its BLAKE2b check against the manifest");
  if (tokenizer.vocab_size() != manifest.vocab)
    throw Error(ErrorCategory::format, "tokenizer model '" + path.string() + "' has " +
                                           std::to_string(tokenizer.vocab_size()) +
                                           " tokens, the manifest says " +
                                           std::to_string(manifest.vocab));
  return tokenizer;
}

Dataset read_dataset(const std::filesystem::path& manifest_path, std::string_view manifest_hash) {
  const std::string text = read_capped(manifest_path, kMaxManifestBytes, "dataset manifest");
  const std::string actual = to_hex(blake2b(std::as_bytes(std::span(text))));
  if (actual != manifest_hash)
    throw Error(ErrorCategory::config,
                "dataset manifest '" + manifest_path.string() + "' has hash " + actual +
                    ", but the run's config names " + std::string(manifest_hash) +
                    " (data.manifest-hash): this folder holds another dataset, or another "
                    "version of it");
  Dataset d;
  d.manifest = decode_manifest(text);
  d.folder = manifest_path.parent_path();
  for (const DatasetFile& shard : d.manifest.train) {
    const std::vector<std::uint16_t> tokens = read_shard(d.folder, d.manifest, shard);
    d.train.insert(d.train.end(), tokens.begin(), tokens.end());
  }
  for (const DatasetFile& shard : d.manifest.validation) {
    const std::vector<std::uint16_t> tokens = read_shard(d.folder, d.manifest, shard);
    d.validation.insert(d.validation.end(), tokens.begin(), tokens.end());
  }
  return d;
}

}  // namespace loco::data
