// host/peer_options.hpp: a peer's dataset, fetched into its data cache.
#include <algorithm>
#include <cstdint>

#include "loco/core/error.hpp"
#include "loco/fetch/dataset_fetch.hpp"
#include "loco/fetch/shard_feed.hpp"
#include "loco/host/peer_options.hpp"
#include "loco/net/units.hpp"
#include "loco/train/train_config.hpp"

namespace loco::host {

namespace {

constexpr std::uint64_t kMaxMib = std::uint64_t{1} << 40;  // a cap past any disk, without overflow

// Whether the peer fetches the run's dataset: a data cache, no local copy, a dataset run.
bool fetches(const PeerOptions& o, const train::TrainConfig& config) {
  if (o.data_cache.empty() || !o.dataset.empty() || config.data.source != "dataset") return false;
  if (config.data.mirrors.empty())
    throw Error(ErrorCategory::config,
                "--peer.data-cache: the run config lists no data.mirrors to fetch the dataset "
                "from; ask the organiser, or copy the dataset and give --peer.dataset");
  return true;
}

fetch::DatasetFetch plan_of(const PeerOptions& o, const train::TrainConfig& config) {
  return {.sources = config.data.mirrors,
          .cache = o.data_cache,
          .manifest_hash = config.data.manifest_hash,
          .max_bytes = std::min(o.data_cache_mib, kMaxMib) << 20,
          .ca_file = o.data_ca_file};
}

}  // namespace

std::unique_ptr<fetch::ShardFeed> start_data_feed(const PeerOptions& o,
                                                  const train::TrainConfig& config) {
  if (!fetches(o, config)) return nullptr;
  return std::make_unique<fetch::ShardFeed>(
      plan_of(o, config),
      net::parse_duration(o.data_retry, "--peer.data-retry", std::chrono::hours(1)));
}

}  // namespace loco::host
