#include "fed_tokens.hpp"

#include <spdlog/spdlog.h>

namespace loco::peer {

namespace {

// Hands `held` to `loop` when it holds a window of its shard (or all there is: the sampler then
// names why the shard is too short); false otherwise.
bool adopt(const fetch::ShardFeed::Held& held, train::InnerLoop& loop, const train::Corpus& corpus,
           std::uint32_t context, bool first) {
  if (!held.whole && !data::holds_a_window(held.tokens, held.shard, context)) return false;
  loop.set_tokens(held.tokens, held.shard, held.memory);
  const data::TokenRange range = loop.sampler().range();
  spdlog::info("data shard {} of {}: training on {} of its tokens{}", held.shard.index,
               held.shard.count, range.end - range.begin,
               held.whole ? " (all of them)" : " (the rest is being fetched)");
  if (first) train::log_data_sample(corpus, held.shard, held.tokens);
  return true;
}

}  // namespace

bool take_first_tokens(fetch::ShardFeed& feed, train::InnerLoop& loop, const train::Corpus& corpus,
                       data::ShardSpec shard, std::uint32_t context,
                       const std::atomic<bool>& stop) {
  feed.assign(shard);
  for (;;) {
    const std::optional<fetch::ShardFeed::Held> held = feed.wait(stop);
    if (!held) return false;
    if (adopt(*held, loop, corpus, context, true)) return true;
  }
}

bool take_more_tokens(fetch::ShardFeed& feed, train::InnerLoop& loop, const train::Corpus& corpus,
                      std::uint32_t context) {
  const std::optional<fetch::ShardFeed::Held> held = feed.poll();
  return held && adopt(*held, loop, corpus, context, !loop.has_sampler());
}

}  // namespace loco::peer
