#include "loco/fetch/dataset_fetch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/data/dataset_manifest.hpp"

namespace loco::fetch {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

[[noreturn]] void fail_io(const fs::path& path, const char* what) {
  throw Error(ErrorCategory::io,
              "data cache '" + path.string() + "': " + what + ": " + std::strerror(errno));
}

// The BLAKE2b-256 of a file's bytes, or nothing when it is not `bytes` long.
std::optional<Digest> digest_if_sized(const fs::path& path, std::uint64_t bytes) {
  std::error_code ec;
  if (fs::file_size(path, ec) != bytes || ec) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  Blake2b hasher;
  std::vector<char> chunk(std::size_t{1} << 20);
  std::uint64_t read = 0;
  while (in && read < bytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    hasher.update(std::as_bytes(std::span(chunk.data(), n)));
    read += n;
  }
  if (read != bytes) return std::nullopt;
  return hasher.finish();
}

// Bytes, rate and ETA of the whole dataset, logged every `every`.
class Progress {
 public:
  Progress(std::uint64_t total, std::chrono::milliseconds every)
      : total_(total), every_(every), start_(Clock::now()), last_(start_) {}

  // `n` bytes received into a .part file now `part` bytes long.
  void received(std::uint64_t n, std::uint64_t part, const std::string& name,
                const HttpSource& source) {
    fetched_ += n;
    const auto now = Clock::now();
    if (now - last_ < every_) return;
    last_ = now;
    const std::uint64_t done = std::min(checked_ + part, total_);
    const double rate = static_cast<double>(fetched_) / std::max(seconds(), 1e-3);
    spdlog::info(
        "data: {:.1f} of {:.1f} MiB ({:.0f}%), {:.2f} MiB/s, ETA {:.0f} s: {} from {}",
        static_cast<double>(done) / kMiB, static_cast<double>(total_) / kMiB,
        100.0 * static_cast<double>(done) / static_cast<double>(std::max<std::uint64_t>(total_, 1)),
        rate / kMiB, static_cast<double>(total_ - done) / std::max(rate, 1.0), name, source.url);
  }
  void checked(std::uint64_t bytes) { checked_ += bytes; }
  std::uint64_t fetched() const { return fetched_; }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  std::uint64_t total_;
  std::chrono::milliseconds every_;
  Clock::time_point start_, last_;
  std::uint64_t checked_ = 0;  // bytes of the files in place, checked
  std::uint64_t fetched_ = 0;  // bytes received by this process
};

// A .part file, written at the offsets the body says (a server that ignored the Range starts
// it over).
class PartFile {
 public:
  explicit PartFile(const fs::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail_io(path, "cannot open");
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end < 0) fail_io(path, "cannot seek");
    size_ = static_cast<std::uint64_t>(end);
  }
  ~PartFile() { ::close(fd_); }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  std::uint64_t size() const { return size_; }
  void truncate(std::uint64_t at) {
    if (::ftruncate(fd_, static_cast<off_t>(at)) != 0) fail_io(path_, "cannot truncate");
    size_ = at;
  }
  void append(std::span<const char> bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
      const ::ssize_t n =
          ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(size_ + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail_io(path_, "cannot write (is the disk full?)");
      done += static_cast<std::size_t>(n);
    }
    size_ += bytes.size();
  }
  void sync() {
    if (::fsync(fd_) != 0) fail_io(path_, "cannot sync");
  }

 private:
  fs::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

struct Fetcher {
  const DatasetFetch& plan;
  std::vector<HttpSource> sources;
  fs::path folder;

  // The rest of `file` from `source` into its .part; returns the bytes the .part held before
  // (an earlier download's). Throws as http_get, and Error(io) for the cache's disk.
  std::uint64_t download(const data::DatasetFile& file, const HttpSource& source,
                         Progress& progress) {
    PartFile part(folder / (file.name + ".part"));
    if (part.size() > file.bytes) part.truncate(0);
    const std::uint64_t kept = part.size();
    if (kept > 0 && kept < file.bytes)
      spdlog::info("data: {}: resuming at byte {} of {} from {}", file.name, kept, file.bytes,
                   source.url);
    if (kept < file.bytes)
      http_get(
          source, file.name, Want{.offset = kept, .total = file.bytes, .exact = true},
          [&](std::uint64_t at, std::span<const char> bytes) {
            if (at != part.size()) part.truncate(at);  // the whole file again: start over
            part.append(bytes);
            progress.received(bytes.size(), part.size(), file.name, source);
          },
          plan.limits);
    part.sync();
    return kept;
  }

  // One file from the first source that gives it whole and checked; its .part kept between
  // sources (a dropped connection resumes where it ended). A file that fails its hash after a
  // resume is fetched again whole from the same source before the source is blamed: the bytes
  // from before (an earlier source, a crash's unwritten tail) may be the bad ones.
  void fetch_file(const data::DatasetFile& file, Progress& progress) {
    const fs::path part_path = folder / (file.name + ".part");
    std::string failures;
    for (const HttpSource& source : sources) {
      for (bool again = true; again;) {
        std::uint64_t kept = 0;
        try {
          kept = download(file, source, progress);
        } catch (const Error& e) {
          if (e.category() == ErrorCategory::io) throw;  // our disk, not the source
          spdlog::warn("data: source {} skipped for {}: {}", source.url, file.name, e.message());
          failures += "\n  " + e.message();
          break;
        }
        if (digest_if_sized(part_path, file.bytes) == file.blake2b) {
          fs::rename(part_path, folder / file.name);
          progress.checked(file.bytes);
          spdlog::info("data: {} checked ({} bytes, from {})", file.name, file.bytes, source.url);
          return;
        }
        fs::remove(part_path);
        again = kept > 0;
        if (again) {
          spdlog::warn(
              "data: {} fails its BLAKE2b check after resuming at byte {}: fetching it "
              "whole from {}",
              file.name, kept, source.url);
        } else {
          spdlog::warn(
              "data: source {} skipped for {}: the file fails its BLAKE2b check against the "
              "manifest (a corrupted or different file); fetching it from the next source",
              source.url, file.name);
          failures += "\n  " + source.url + file.name + ": fails its BLAKE2b check";
        }
      }
    }
    throw Error(ErrorCategory::network,
                "data: no source gave '" + file.name + "' whole and checked:" + failures);
  }

  // The manifest from the first source whose copy has the run's hash and decodes.
  data::DatasetManifest fetch_manifest() {
    const fs::path path = folder / data::kManifestName;
    std::string text;
    std::string failures;
    for (const HttpSource& source : sources) {
      text.clear();
      try {
        http_get(
            source, data::kManifestName,
            Want{.offset = 0, .total = data::kMaxManifestBytes, .exact = false},
            [&](std::uint64_t, std::span<const char> bytes) {
              text.append(bytes.data(), bytes.size());
            },
            plan.limits);
        const std::string hash = to_hex(blake2b(std::as_bytes(std::span(text))));
        if (hash != plan.manifest_hash)
          throw Error(ErrorCategory::format, source.url + data::kManifestName + ": has hash " +
                                                 hash + ", not the run's data.manifest-hash " +
                                                 plan.manifest_hash +
                                                 " (another dataset, or another version of it)");
        data::DatasetManifest manifest = data::decode_manifest(text);
        write_file(path, text);
        spdlog::info("data: manifest {} checked (from {}): {} train and {} validation shards",
                     plan.manifest_hash.substr(0, 16), source.url, manifest.train.size(),
                     manifest.validation.size());
        return manifest;
      } catch (const Error& e) {
        if (e.category() == ErrorCategory::io) throw;
        spdlog::warn("data: source {} skipped for the manifest: {}", source.url, e.message());
        failures += "\n  " + e.message();
      }
    }
    throw Error(ErrorCategory::network,
                "data: no source gave the run's manifest (" + plan.manifest_hash + "):" + failures);
  }

  static void write_file(const fs::path& path, const std::string& text) {
    const fs::path part = path.string() + ".part";
    {
      PartFile out(part);
      out.truncate(0);
      out.append(text);
      out.sync();
    }
    fs::rename(part, path);
  }
};

// The files a manifest names, the tokenizer model first.
std::vector<data::DatasetFile> files_of(const data::DatasetManifest& manifest) {
  std::vector<data::DatasetFile> files;
  if (manifest.tokenizer != "bytes") files.push_back(manifest.tokenizer_model);
  files.insert(files.end(), manifest.train.begin(), manifest.train.end());
  files.insert(files.end(), manifest.validation.begin(), manifest.validation.end());
  return files;
}

}  // namespace

fs::path fetch_dataset(const DatasetFetch& plan) {
  if (plan.sources.empty())
    throw Error(ErrorCategory::config,
                "data: no source to fetch the dataset from (the run config's data.mirrors)");
  Fetcher fetcher{
      .plan = plan, .sources = {}, .folder = plan.cache / plan.manifest_hash.substr(0, 16)};
  for (const std::string& url : plan.sources) fetcher.sources.push_back(parse_http_source(url));
  std::error_code ec;
  fs::create_directories(fetcher.folder, ec);
  if (ec)
    throw Error(ErrorCategory::io,
                "data cache '" + fetcher.folder.string() + "': cannot create: " + ec.message());

  const fs::path manifest_path = fetcher.folder / data::kManifestName;
  data::DatasetManifest manifest;
  const std::optional<std::uint64_t> held = [&]() -> std::optional<std::uint64_t> {
    const auto size = fs::file_size(manifest_path, ec);
    if (ec || size > data::kMaxManifestBytes) return std::nullopt;
    return size;
  }();
  const std::optional<Digest> held_digest =
      held ? digest_if_sized(manifest_path, *held) : std::nullopt;
  if (held_digest && to_hex(*held_digest) == plan.manifest_hash) {
    std::ifstream in(manifest_path, std::ios::binary);
    std::string text(*held, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    manifest = data::decode_manifest(text);
  } else {
    manifest = fetcher.fetch_manifest();
  }

  const std::vector<data::DatasetFile> files = files_of(manifest);
  std::uint64_t total = 0;
  for (const data::DatasetFile& file : files) total += file.bytes;
  if (total > plan.max_bytes)
    throw Error(
        ErrorCategory::config,
        fmt::format("data: the dataset is {:.1f} MiB, over the data cache's cap of {:.1f} "
                    "MiB (--peer.data-cache-mib)",
                    static_cast<double>(total) / kMiB, static_cast<double>(plan.max_bytes) / kMiB));
  Progress progress(total, plan.progress_every);
  std::size_t fetched_files = 0;
  for (const data::DatasetFile& file : files) {
    if (digest_if_sized(fetcher.folder / file.name, file.bytes) == file.blake2b) {
      progress.checked(file.bytes);
      continue;
    }
    fs::remove(fetcher.folder / file.name, ec);
    fetcher.fetch_file(file, progress);
    ++fetched_files;
  }
  spdlog::info("data: {} files ({:.1f} MiB) checked in {}; {} fetched ({:.1f} MiB) in {:.1f} s",
               files.size(), static_cast<double>(total) / kMiB, fetcher.folder.string(),
               fetched_files, static_cast<double>(progress.fetched()) / kMiB, progress.seconds());
  return fetcher.folder;
}

}  // namespace loco::fetch
