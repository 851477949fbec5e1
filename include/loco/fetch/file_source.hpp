#pragma once
// A source of a dataset's train shards other than an HTTP URL: another peer of the run, which
// serves its data cache over the mesh (host/peer_shards.hpp). DatasetFetcher asks the peers a
// PeerSources gives before its HTTP sources, and checks their bytes as it checks a mirror's: the
// whole shard against the manifest's size and BLAKE2b before it is renamed into place.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "loco/data/dataset_manifest.hpp"
#include "loco/fetch/http_get.hpp"

namespace loco::fetch {

class FileSource {
 public:
  virtual ~FileSource() = default;
  // For the log: "peer 1a2b3c4d".
  virtual const std::string& name() const = 0;
  // Bytes [want.offset, want.total) of `file`, train shard `index` of the manifest, to `sink` in
  // order. Throws Error(network) for a source gone, silent or too slow, Error(protocol) for a
  // refusal (it does not hold the shard) or a piece not asked for.
  virtual void get(std::size_t index, const data::DatasetFile& file, Want want,
                   const BodySink& sink) = 0;
};

// The peers to ask for train shard `index` before the HTTP sources, in order (none: the HTTP
// sources only). Called on the fetch's thread before each train shard.
using PeerSources = std::function<std::vector<std::shared_ptr<FileSource>>(std::size_t index)>;

}  // namespace loco::fetch
