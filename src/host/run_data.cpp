// host/peer_options.hpp: a peer's dataset, fetched into its data cache.
#include <algorithm>
#include <cstdint>

#include "loco/core/error.hpp"
#include "loco/fetch/dataset_fetch.hpp"
#include "loco/host/peer_options.hpp"
#include "loco/train/train_config.hpp"

namespace loco::host {

namespace {
constexpr std::uint64_t kMaxMib = std::uint64_t{1} << 40;  // a cap past any disk, without overflow
}  // namespace

void fetch_run_data(const PeerOptions& o, train::TrainConfig& config) {
  if (o.data_cache.empty() || !o.dataset.empty() || config.data.source != "dataset") return;
  if (config.data.mirrors.empty())
    throw Error(ErrorCategory::config,
                "--peer.data-cache: the run config lists no data.mirrors to fetch the dataset "
                "from; ask the organiser, or copy the dataset and give --peer.dataset");
  const fetch::DatasetFetch plan{.sources = config.data.mirrors,
                                 .cache = o.data_cache,
                                 .manifest_hash = config.data.manifest_hash,
                                 .max_bytes = std::min(o.data_cache_mib, kMaxMib) << 20};
  config.data.manifest = fetch::fetch_dataset(plan).string();
}

}  // namespace loco::host
