#include "loco/fetch/shard_feed.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/data/dataset_reader.hpp"

namespace loco::fetch {

ShardFeed::ShardFeed(DatasetFetch plan, Duration retry) : retry_(retry) {
  plan.stop = &stop_;
  fetcher_ = std::make_unique<DatasetFetcher>(std::move(plan));
  manifest_ = fetcher_->open();
  folder_ = fetcher_->folder();
  std::vector<data::DatasetFile> base = manifest_.validation;
  if (manifest_.tokenizer != "bytes") base.insert(base.begin(), manifest_.tokenizer_model);
  for (const data::DatasetFile& file : base) base_files_.insert(file.name);
  fetcher_->set_in_use(base_files_);
  for (const data::DatasetFile& file : base) fetcher_->fetch(file);
  thread_ = std::thread([this] { run(); });
}

ShardFeed::~ShardFeed() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ShardFeed::assign(data::ShardSpec shard) {
  {
    const std::lock_guard lock(mutex_);
    if (assigned_ == shard) return;
    assigned_ = shard;
    ++generation_;
    offered_.reset();  // an earlier shard's: the loop keeps what it took of it
  }
  changed_.notify_all();
}

std::optional<ShardFeed::Held> ShardFeed::poll() {
  const std::lock_guard lock(mutex_);
  if (error_) std::rethrow_exception(error_);
  return std::exchange(offered_, std::nullopt);
}

std::optional<ShardFeed::Held> ShardFeed::wait(const std::atomic<bool>& stop,
                                               std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  // `stop` is set by a signal handler's thread without a notification: looked at every 100 ms.
  while (!error_ && !offered_ && !stall_news_ && !stop.load() &&
         std::chrono::steady_clock::now() < deadline)
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  if (error_) std::rethrow_exception(error_);
  stall_news_ = false;
  return std::exchange(offered_, std::nullopt);
}

std::optional<std::string> ShardFeed::stalled() {
  const std::lock_guard lock(mutex_);
  return stalled_;
}

bool ShardFeed::fetch_or_stall(const data::DatasetFile& file, data::ShardSpec shard,
                               std::uint64_t generation) {
  for (;;) {
    try {
      fetcher_->fetch(file);
      const std::lock_guard lock(mutex_);
      stalled_.reset();
      return true;
    } catch (const Error& e) {
      std::unique_lock lock(mutex_);
      if (e.category() != ErrorCategory::network || !offered_any_) throw;
      spdlog::warn("data shard {} of {}: {}; training on the tokens held, trying again in {:.0f} s",
                   shard.index, shard.count, e.message(),
                   std::chrono::duration<double>(retry_).count());
      if (!stalled_) stall_news_ = true;
      stalled_ = e.message();
      changed_.notify_all();
      if (changed_.wait_for(lock, retry_,
                            [&] { return stop_.load() || generation_ != generation; })) {
        stalled_.reset();  // stopped, or another shard: its own fetch says how it goes
        return false;
      }
    }
  }
}

void ShardFeed::run() {
  std::uint64_t fed = 0;  // the generation fed last
  try {
    for (;;) {
      data::ShardSpec shard;
      std::uint64_t generation = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_.load() || (assigned_ && generation_ != fed); });
        if (stop_) return;
        shard = *assigned_;
        generation = generation_;
      }
      feed(shard, generation);
      fed = generation;
    }
  } catch (const FetchStopped&) {
  } catch (...) {
    {
      const std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    changed_.notify_all();
  }
}

// The files the cap keeps: the base files, the shards of the tokens offered last (the loop may
// still train on them) and those of `next`.
void ShardFeed::in_use(data::ShardSpan next) {
  std::set<std::string> names = base_files_;
  for (const data::ShardSpan span : {held_span_, next})
    for (std::size_t k = span.first; k < span.end; ++k) names.insert(manifest_.train[k].name);
  fetcher_->set_in_use(std::move(names));
}

void ShardFeed::feed(data::ShardSpec shard, std::uint64_t generation) {
  const data::ShardSpan span = data::train_shards_of(manifest_, shard);
  std::uint64_t tokens = 0, bytes = 0;
  for (std::size_t k = span.first; k < span.end; ++k) {
    tokens += manifest_.train[k].tokens;
    bytes += manifest_.train[k].bytes;
  }
  in_use(span);
  spdlog::info(
      "data shard {} of {}: {} dataset shards ({:.1f} MiB), fetched one at a time; "
      "training starts on the first",
      shard.index, shard.count, span.end - span.first,
      static_cast<double>(bytes) / (1024.0 * 1024.0));
  // Sized by the manifest, which the run's hash pins: not by anything a source says.
  std::shared_ptr<std::uint16_t[]> memory = std::make_shared_for_overwrite<std::uint16_t[]>(tokens);
  const std::uint64_t first = span.first * manifest_.shard_tokens;
  std::uint64_t loaded = 0;
  // Offers the tokens loaded so far; false when the shard changed since (the new one instead).
  const auto offer = [&](bool whole) {
    Held held{.shard = shard,
              .tokens = {.tokens = std::span<const std::uint16_t>(memory.get(), loaded),
                         .first = first,
                         .total = manifest_.train_tokens()},
              .memory = memory,
              .whole = whole};
    {
      const std::lock_guard lock(mutex_);
      if (generation_ != generation) return false;
      offered_ = std::move(held);
      offered_any_ = true;
    }
    changed_.notify_all();
    return true;
  };
  if (span.first == span.end) {
    offer(true);  // no tokens: the loop names the error (a shard shorter than a window)
    return;
  }
  for (std::size_t k = span.first; k < span.end; ++k) {
    const data::DatasetFile& file = manifest_.train[k];
    if (!fetch_or_stall(file, shard, generation)) return;
    // Read back and checked in memory: the bytes trained on are the bytes hashed.
    const std::vector<std::uint16_t> checked = data::read_shard(folder_, manifest_, file);
    LOCO_ASSERT(loaded + checked.size() <= tokens, "a shard longer than its manifest row");
    std::ranges::copy(checked, memory.get() + loaded);
    loaded += checked.size();
    spdlog::info("data shard {} of {}: {} of {} dataset shards checked and in memory ({})",
                 shard.index, shard.count, k + 1 - span.first, span.end - span.first, file.name);
    if (!offer(k + 1 == span.end)) return;
    held_span_ = {span.first, k + 1};
  }
}

}  // namespace loco::fetch
