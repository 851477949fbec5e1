#pragma once
// A peer's dataset, fetched over HTTP from the sources a run lists (its mirrors, the tracker's
// HTTP server: docs/TRACKER.md) into a cache folder, every byte checked before it is used.
//
// The manifest first, checked against the run's manifest-hash; then, a file at a time as the
// caller asks (the tokenizer model, the validation shards, the train shards of the peer's data
// shard: fetch/shard_feed.hpp), each file the cache lacks is written to <name>.part, resumed with
// a Range after an interruption (a crash, a killed peer, a dropped connection), checked against
// the manifest's size and BLAKE2b, and only then renamed into place. A source that fails
// (unreachable, 404, HTML, wrong length, truncated, too slow, bytes failing their hash) is named
// in the log, the file is fetched from the next one, and the failed source is tried last from then
// on. A train shard is asked of the run's other peers first when the caller gives them
// (set_peer_sources: the peers that may hold it; a peer whose bytes fail the hash is named and not
// asked again), then of the HTTP sources. Room is made under the cache's cap before a byte is
// fetched (fetch/cache_cap.hpp); the sizes come from the manifest, which the run's hash pins, never
// from a source.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "loco/data/dataset_manifest.hpp"
#include "loco/fetch/file_source.hpp"
#include "loco/fetch/http_get.hpp"

namespace loco::fetch {

struct DatasetFetch {
  std::vector<std::string> sources;  // base URLs, tried in this order
  std::filesystem::path cache;       // the dataset goes into cache/<first 16 hex of its hash>
  std::string manifest_hash;         // the run's data.manifest-hash
  std::uint64_t max_bytes = 0;       // the cache's cap, over every dataset in it
  // The CA certificates https:// sources must chain to (HttpSource::ca_file); empty: the system's.
  std::string ca_file{};
  HttpGetLimits limits{};
  std::chrono::milliseconds progress_every = std::chrono::seconds(2);
  // Set from another thread: a fetch in progress stops at its next chunk (FetchStopped).
  const std::atomic<bool>* stop = nullptr;
};

// Thrown by DatasetFetcher::fetch once DatasetFetch::stop is set.
struct FetchStopped {};

// One dataset's folder in the cache, filled a file at a time. Used by one thread at a time.
class DatasetFetcher {
 public:
  // Throws Error(config) for no source or a bad URL, Error(io) when the folder cannot be made.
  explicit DatasetFetcher(DatasetFetch plan);
  ~DatasetFetcher();
  DatasetFetcher(const DatasetFetcher&) = delete;
  DatasetFetcher& operator=(const DatasetFetcher&) = delete;

  // The manifest: the cache's copy when it has the run's hash, else the first source's copy that
  // has it. Throws Error(network) when no source gave it.
  const data::DatasetManifest& open();
  const data::DatasetManifest& manifest() const;
  const std::filesystem::path& folder() const;

  // The files the cap never evicts (with the manifest and the file being fetched): the ones in
  // use. Names of the manifest's files.
  void set_in_use(std::set<std::string> names);
  // `file` (one the manifest names) checked in the folder: the cache's copy when it is whole and
  // checked, else fetched. Returns whether it was fetched. Throws Error(network) when no source
  // gave it whole and checked (each source's failure in the message), Error(resource) when the
  // cap cannot hold it beside the files in use, Error(io) for the cache's disk.
  bool fetch(const data::DatasetFile& file);
  // The peers to ask for a train shard before the HTTP sources (file_source.hpp); a peer whose
  // bytes fail a hash is not asked again. Any thread; takes effect at the next file.
  void set_peer_sources(PeerSources peers);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace loco::fetch
