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

// Before each step: hands `loop` the tokens the feed holds now, when it holds more (a wider range
// to draw windows from; a new shard's first window), then waits for the feed until the next
// batch's windows are held: the batches come in an order fixed by the whole shard
// (data/batch_sampler.hpp), not by when its pieces arrive. While the feed is stalled (a piece no
// source gives, tried again: fetch/shard_feed.hpp) the loop trains on the tokens it holds in an
// order of their own instead (InnerLoop::stand_in), saying so, and goes back to the shard's order
// once the piece is in. Returns false when `stop` was set first. Throws as the feed.
bool take_more_tokens(fetch::ShardFeed& feed, train::InnerLoop& loop, const train::Corpus& corpus,
                      std::uint32_t context, const std::atomic<bool>& stop);

// Between steps: follows the tracker's assignment. When `assigned` (the shard of this peer's
// latest join: a peer that joined again may be given another) differs from `shard`, the feed
// (when there is one) fetches the new shard, and take_more_tokens hands the loop its first window
// (the loop trains on the old shard's tokens until then); without a feed the loop reads the new
// shard of its local tokens from the next step. Updates `shard`.
void follow_assignment(data::ShardSpec& shard, data::ShardSpec assigned, fetch::ShardFeed* feed,
                       train::InnerLoop& loop);

}  // namespace loco::peer
