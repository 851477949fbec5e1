#include "loco/fetch/dataset_fetch.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/fetch/cache_cap.hpp"
#include "part_file.hpp"

namespace loco::fetch {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}  // namespace

// A file's download: its bytes, this process's rate and the ETA, logged every `every`.
class FetchProgress {
 public:
  explicit FetchProgress(std::chrono::milliseconds every) : every_(every) {}

  void started() {
    start_ = Clock::now();
    last_ = start_;
  }
  // `n` bytes received into a .part file now `part` bytes long, of a file of `total`.
  void received(std::uint64_t n, std::uint64_t part, std::uint64_t total, const std::string& name,
                const std::string& source) {
    fetched_ += n;
    session_ += n;
    const auto now = Clock::now();
    if (now - last_ < every_) return;
    last_ = now;
    const double rate = static_cast<double>(session_) /
                        std::max(std::chrono::duration<double>(now - start_).count(), 1e-3);
    spdlog::info("data: {} {:.1f} of {:.1f} MiB ({:.0f}%), {:.2f} MiB/s, ETA {:.0f} s, from {}",
                 name, static_cast<double>(part) / kMiB, static_cast<double>(total) / kMiB,
                 100.0 * static_cast<double>(part) / static_cast<double>(std::max(total, 1ul)),
                 rate / kMiB,
                 static_cast<double>(total - std::min(part, total)) / std::max(rate, 1.0), source);
  }
  std::uint64_t fetched() const { return fetched_; }
  void file_done() { session_ = 0; }

 private:
  std::chrono::milliseconds every_;
  Clock::time_point start_, last_;
  std::uint64_t fetched_ = 0;  // bytes received by this process
  std::uint64_t session_ = 0;  // of the file being fetched
};

// One place a file may come from: an HTTP source, or a peer (FileSource).
struct Source {
  std::string label;  // for the log: the URL, or "peer 1a2b3c4d"
  std::function<void(Want, const BodySink&)> get;
  bool peer = false;
};

struct DatasetFetcher::State {
  DatasetFetch plan;
  std::vector<HttpSource> sources;  // in the order tried: a failed source moves to the back
  fs::path folder;
  std::optional<data::DatasetManifest> manifest;
  std::set<fs::path> in_use;
  FetchProgress progress{plan.progress_every};
  std::mutex peers_mutex;  // guards peers (set_peer_sources, from another thread)
  PeerSources peers;
  std::set<std::string> bad_peers;  // sent bytes that failed a hash: not asked again

  void demote(const std::string& url) {
    const auto at = std::ranges::find(sources, url, &HttpSource::url);
    if (at != sources.end()) std::rotate(at, at + 1, sources.end());
  }

  // Where `file` may come from, in order: the peers that may hold it (a train shard, `index`),
  // then the HTTP sources.
  std::vector<Source> sources_for(const data::DatasetFile& file, std::optional<std::size_t> index) {
    std::vector<Source> out;
    PeerSources provider;
    {
      const std::lock_guard lock(peers_mutex);
      provider = peers;
    }
    if (index && provider)
      for (const std::shared_ptr<FileSource>& peer : provider(*index)) {
        if (bad_peers.contains(peer->name())) continue;
        out.push_back(
            {.label = peer->name(),
             .get = [peer, i = *index, &file](
                        Want want, const BodySink& sink) { peer->get(i, file, want, sink); },
             .peer = true});
      }
    for (const HttpSource& source : sources)
      out.push_back({.label = source.url,
                     .get =
                         [this, source, name = file.name](Want want, const BodySink& sink) {
                           http_get(source, name, want, sink, plan.limits);
                         },
                     .peer = false});
    return out;
  }

  // A source that failed: an HTTP one is tried last from now on, a peer that sent bad bytes never
  // again.
  void blame(const Source& source, bool bad_bytes) {
    if (!source.peer)
      demote(source.label);
    else if (bad_bytes)
      bad_peers.insert(source.label);
  }

  // The rest of `file` from `source` into its .part; returns the bytes the .part held before
  // (an earlier download's). Throws as http_get, Error(io) for the disk, FetchStopped.
  std::uint64_t download(const data::DatasetFile& file, const Source& source) {
    PartFile part(folder / (file.name + ".part"));
    if (part.size() > file.bytes) part.truncate(0);
    const std::uint64_t kept = part.size();
    if (kept > 0 && kept < file.bytes)
      spdlog::info("data: {}: resuming at byte {} of {} from {}", file.name, kept, file.bytes,
                   source.label);
    progress.started();
    if (kept < file.bytes)
      source.get(Want{.offset = kept, .total = file.bytes, .exact = true},
                 [&](std::uint64_t at, std::span<const char> bytes) {
                   if (plan.stop != nullptr && plan.stop->load()) throw FetchStopped{};
                   if (at != part.size()) part.truncate(at);  // the whole file again: start over
                   part.append(bytes);
                   progress.received(bytes.size(), part.size(), file.bytes, file.name,
                                     source.label);
                 });
    part.sync();
    progress.file_done();
    return kept;
  }

  // One file from the first source that gives it whole and checked; its .part kept between
  // sources (a dropped connection resumes where it ended). A file that fails its hash after a
  // resume is fetched again whole from the same source before the source is blamed: the bytes
  // from before (an earlier source, a crash's unwritten tail) may be the bad ones.
  void fetch_file(const data::DatasetFile& file, std::optional<std::size_t> index) {
    const fs::path part_path = folder / (file.name + ".part");
    std::string failures;
    for (const Source& source : sources_for(file, index)) {
      for (bool again = true; again;) {
        std::uint64_t kept = 0;
        try {
          kept = download(file, source);
        } catch (const Error& e) {
          if (e.category() == ErrorCategory::io) throw;  // our disk, not the source
          // A peer that refuses (most often: it does not hold the shard) is no fault of its own.
          if (source.peer && e.category() == ErrorCategory::protocol)
            spdlog::info("data: {} does not give {} ({}); asking the next source", source.label,
                         file.name, e.message());
          else
            spdlog::warn("data: source {} skipped for {}: {}", source.label, file.name,
                         e.message());
          failures += "\n  " + (source.peer ? source.label + ": " : "") + e.message();
          blame(source, false);
          break;
        }
        if (digest_if_sized(part_path, file.bytes) == file.blake2b) {
          fs::rename(part_path, folder / file.name);
          spdlog::info("data: {} checked ({} bytes, from {})", file.name, file.bytes, source.label);
          return;
        }
        fs::remove(part_path);
        again = kept > 0;
        if (again) {
          spdlog::warn(
              "data: {} fails its BLAKE2b check after resuming at byte {}: fetching it "
              "whole from {}",
              file.name, kept, source.label);
        } else {
          spdlog::warn(
              "data: source {} skipped for {}: the file fails its BLAKE2b check against the "
              "manifest (a corrupted or different file); fetching it from the next source",
              source.label, file.name);
          failures += "\n  " + source.label + (source.peer ? ": " : "") + file.name +
                      ": fails its BLAKE2b check";
          blame(source, true);
        }
      }
    }
    throw Error(ErrorCategory::network,
                "data: no source gave '" + file.name + "' whole and checked:" + failures);
  }

  // The manifest from the first source whose copy has the run's hash and decodes.
  data::DatasetManifest fetch_manifest() {
    std::string text, failures;
    for (const HttpSource& source : std::vector<HttpSource>(sources)) {
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
        data::DatasetManifest decoded = data::decode_manifest(text);
        make_room(plan.cache, plan.max_bytes, text.size(), in_use);
        write_file_atomically(folder / data::kManifestName, text);
        spdlog::info("data: manifest {} checked (from {}): {} train and {} validation shards",
                     plan.manifest_hash.substr(0, 16), source.url, decoded.train.size(),
                     decoded.validation.size());
        return decoded;
      } catch (const Error& e) {
        if (e.category() == ErrorCategory::io || e.category() == ErrorCategory::resource) throw;
        spdlog::warn("data: source {} skipped for the manifest: {}", source.url, e.message());
        failures += "\n  " + e.message();
        demote(source.url);
      }
    }
    throw Error(ErrorCategory::network,
                "data: no source gave the run's manifest (" + plan.manifest_hash + "):" + failures);
  }

  // The cache's manifest, when it is there and has the run's hash.
  std::optional<data::DatasetManifest> cached_manifest() const {
    const fs::path path = folder / data::kManifestName;
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec || size > data::kMaxManifestBytes) return std::nullopt;
    const std::optional<Digest> digest = digest_if_sized(path, size);
    if (!digest || to_hex(*digest) != plan.manifest_hash) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    std::string text(size, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    return data::decode_manifest(text);
  }
};

DatasetFetcher::DatasetFetcher(DatasetFetch plan) : s_(std::make_unique<State>()) {
  if (plan.sources.empty())
    throw Error(ErrorCategory::config,
                "data: no source to fetch the dataset from (the run config's data.mirrors)");
  for (const std::string& url : plan.sources)
    s_->sources.push_back(parse_http_source(url, plan.ca_file));
  s_->folder = plan.cache / plan.manifest_hash.substr(0, 16);
  s_->progress = FetchProgress(plan.progress_every);
  s_->plan = std::move(plan);
  std::error_code ec;
  fs::create_directories(s_->folder, ec);
  if (ec)
    throw Error(ErrorCategory::io,
                "data cache '" + s_->folder.string() + "': cannot create: " + ec.message());
  s_->in_use = {s_->folder / data::kManifestName};
}

DatasetFetcher::~DatasetFetcher() = default;

const data::DatasetManifest& DatasetFetcher::open() {
  if (!s_->manifest) s_->manifest = s_->cached_manifest();
  if (!s_->manifest) s_->manifest = s_->fetch_manifest();
  touch(s_->folder / data::kManifestName);
  return *s_->manifest;
}

const data::DatasetManifest& DatasetFetcher::manifest() const {
  return s_->manifest.value();
}

const fs::path& DatasetFetcher::folder() const {
  return s_->folder;
}

void DatasetFetcher::set_in_use(std::set<std::string> names) {
  s_->in_use = {s_->folder / data::kManifestName};
  for (const std::string& name : names) s_->in_use.insert(s_->folder / name);
}

bool DatasetFetcher::fetch(const data::DatasetFile& file) {
  const fs::path path = s_->folder / file.name;
  if (digest_if_sized(path, file.bytes) == file.blake2b) {
    touch(path);
    return false;
  }
  std::error_code ec;
  fs::remove(path, ec);
  // Room for the whole file, its .part counted among what the cache holds.
  std::set<fs::path> in_use = s_->in_use;
  in_use.insert(path.string() + ".part");
  const std::uint64_t part = fs::file_size(path.string() + ".part", ec);
  make_room(s_->plan.cache, s_->plan.max_bytes, file.bytes - (ec ? 0 : std::min(part, file.bytes)),
            in_use);
  // A train shard may come from peers: its index, by its place in the manifest.
  const std::vector<data::DatasetFile>& train = s_->manifest.value().train;
  const auto at = std::ranges::find(train, file.name, &data::DatasetFile::name);
  s_->fetch_file(file, at == train.end()
                           ? std::nullopt
                           : std::optional(static_cast<std::size_t>(at - train.begin())));
  return true;
}

void DatasetFetcher::set_peer_sources(PeerSources peers) {
  const std::lock_guard lock(s_->peers_mutex);
  s_->peers = std::move(peers);
}

}  // namespace loco::fetch
