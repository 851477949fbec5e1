#pragma once
// A peer's dataset shared with the run's other peers (issue 46; docs/VOLUNTEER.md): the train
// shards its data cache holds, served over the mesh (swarm/shard_service.hpp), and the other
// members as sources of its own train shards, asked before the run's HTTP sources
// (fetch/file_source.hpp).
//
// Who holds what: a member holds the shards of the data shard the tracker gave it (the view lists
// it) once it fetched them, and may hold others (an earlier shard, before an eviction or a tracker
// restart; a shard beside its own). The tracker gives each data shard to one member at a time,
// so its view names one likely holder at most; the others are found by asking. So a shard is
// asked of the members whose data shard covers it first, then of the others in the view's order,
// at most kPeersAsked; a member that does not hold it refuses at once. A member's claim (its
// answer) is checked as a mirror's: each piece against what was asked, the whole shard against
// the manifest's BLAKE2b, and a member whose bytes fail it is named and not asked again
// (fetch/dataset_fetch.hpp). Pieces of kPieceBytes, one at a time, each within kPieceTimeout: a
// member slower than that is skipped for the next source.

#include <chrono>
#include <cstddef>
#include <memory>

#include "loco/fetch/file_source.hpp"
#include "loco/fetch/shard_feed.hpp"
#include "loco/swarm/shard_link.hpp"
#include "loco/swarm/swarm_thread.hpp"

namespace loco::host {

inline constexpr std::size_t kPeersAsked = 8;
inline constexpr std::uint32_t kPieceBytes = 1u << 20;
inline constexpr Duration kPieceTimeout = std::chrono::seconds(30);

// A swarm thread for `config` whose peer shares `feed`'s dataset (null: none) with the run: it
// serves the train shards of the feed's cache (cache_store), and the feed asks the run's other
// members for its own before its HTTP sources (peer_sources). `identity` and `feed` outlive it.
std::unique_ptr<swarm::SwarmThread> sharing_thread(swarm::SwarmConfig config,
                                                   const secure::KeyPair& identity,
                                                   fetch::ShardFeed* feed);

// What this peer serves: the train shards whole in `feed`'s folder. A file is there under its name
// only once it was checked against the manifest (fetch/dataset_fetch.hpp), so a file of the
// manifest's size is served without hashing it again; the asker checks it anyway. `feed`
// outlives the swarm that serves it.
std::shared_ptr<const swarm::ShardStore> cache_store(const fetch::ShardFeed& feed);

// The run's other members as sources of `manifest`'s train shards, over `link`.
fetch::PeerSources peer_sources(std::shared_ptr<swarm::ShardLink> link,
                                const data::DatasetManifest& manifest);

}  // namespace loco::host
