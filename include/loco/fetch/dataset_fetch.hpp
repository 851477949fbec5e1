#pragma once
// A peer's dataset, fetched over HTTP from the sources a run lists (its mirrors, the tracker's
// HTTP server: docs/TRACKER.md) into a cache folder, every byte checked before it is used.
//
// The manifest first, checked against the run's manifest-hash; then each file it names that the
// cache lacks (the tokenizer model, the train and validation shards), written to <name>.part,
// resumed with a Range after an interruption (a crash, a killed peer, a dropped connection),
// checked against the manifest's size and BLAKE2b, and only then renamed into place. A source
// that fails (unreachable, 404, HTML, wrong length, truncated, bytes failing their hash) is
// named in the log and the file is fetched from the next one. Progress (bytes, rate, ETA) is
// logged every few seconds.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "loco/fetch/http_get.hpp"

namespace loco::fetch {

struct DatasetFetch {
  std::vector<std::string> sources;  // base URLs, tried in this order
  std::filesystem::path cache;       // the dataset goes into cache/<first 16 hex of its hash>
  std::string manifest_hash;         // the run's data.manifest-hash
  std::uint64_t max_bytes = 0;       // the cache's cap: a larger dataset is refused up front
  HttpGetLimits limits{};
  std::chrono::milliseconds progress_every = std::chrono::seconds(2);
};

// Returns the folder holding the checked dataset (its manifest.txt and every file it names).
// Throws Error(config) for no source, a bad URL, or a dataset over the cap; Error(network) when
// no source gave a file (each source's failure in the message); Error(io) for the cache's disk.
std::filesystem::path fetch_dataset(const DatasetFetch& plan);

}  // namespace loco::fetch
