#include "fed_tokens.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

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
    if (held && adopt(*held, loop, corpus, context, true)) return true;
    if (!held && stop.load()) return false;  // else a stall: the feed tries again
  }
}

bool take_more_tokens(fetch::ShardFeed& feed, train::InnerLoop& loop, const train::Corpus& corpus,
                      std::uint32_t context, const std::atomic<bool>& stop) {
  if (const std::optional<fetch::ShardFeed::Held> held = feed.poll())
    adopt(*held, loop, corpus, context, !loop.has_sampler());
  const data::ShardSpec shard = loop.sampler().shard();
  if (loop.sampler().ready()) {
    if (loop.standing_in())
      spdlog::info("data shard {} of {}: its next tokens are in; back to the shard's order",
                   shard.index, shard.count);
    loop.stand_in(false);
    return true;
  }
  if (loop.standing_in()) return true;  // until the feed gives what the shard's order needs
  spdlog::info(
      "data shard {} of {}: the next batch's tokens are not in yet; waiting for them (the "
      "batches come in the shard's order, not in the order its pieces arrive)",
      shard.index, shard.count);
  const auto started = std::chrono::steady_clock::now();
  while (!loop.sampler().ready()) {
    if (const std::optional<std::string> why = feed.stalled()) {
      spdlog::warn(
          "data shard {} of {}: training on its {} tokens held, out of the shard's order, until "
          "the rest comes ({})",
          shard.index, shard.count, loop.sampler().range().end - loop.sampler().range().begin,
          *why);
      loop.stand_in(true);
      return true;
    }
    const std::optional<fetch::ShardFeed::Held> held = feed.wait(stop);
    if (held)
      adopt(*held, loop, corpus, context, false);
    else if (stop.load())
      return false;
  }
  spdlog::info("data shard {} of {}: waited {:.1f} s for its next tokens", shard.index, shard.count,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return true;
}

void follow_assignment(data::ShardSpec& shard, data::ShardSpec assigned, fetch::ShardFeed* feed,
                       train::InnerLoop& loop) {
  if (assigned == shard) return;
  spdlog::info(
      "the tracker gave this peer data shard {} of {} (it held {} of {}) as it joined again{}",
      assigned.index, assigned.count, shard.index, shard.count,
      feed ? ": fetching it, training on the old one's tokens meanwhile" : "");
  shard = assigned;
  if (feed)
    feed->assign(assigned);
  else
    loop.set_shard(assigned);
}

}  // namespace loco::peer
