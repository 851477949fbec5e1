#pragma once
// loco-peer's side of a data feed (loco/fetch/shard_feed.hpp): its inner loop reads the tokens of
// its data shard as they arrive, from the first manifest shard that holds a window of them.

#include <atomic>

#include "loco/fetch/shard_feed.hpp"
#include "loco/train/corpus.hpp"
#include "loco/train/inner_loop.hpp"

namespace loco::peer {

// Assigns `shard` to the feed and waits until it offers tokens that hold a window of it, then
// hands them to `loop` and logs the sample line. The one wait on the network: the peer has no
// checked data of its own before. Returns false when `stop` was set first. Throws as the feed,
// and as BatchSampler for a shard too short to train on.
bool take_first_tokens(fetch::ShardFeed& feed, train::InnerLoop& loop, const train::Corpus& corpus,
                       data::ShardSpec shard, std::uint32_t context, const std::atomic<bool>& stop);

// Between steps: hands `loop` the tokens the feed holds now, when it holds more (a wider range to
// draw windows from; a new shard's first window). Returns whether it did. Throws as the feed.
bool take_more_tokens(fetch::ShardFeed& feed, train::InnerLoop& loop, const train::Corpus& corpus,
                      std::uint32_t context);

}  // namespace loco::peer
