#pragma once
// A peer's training data as it arrives (issue 46): the manifest shards its data shard maps to
// (data::train_shards_of), fetched on a thread of their own while the peer trains.
//
// The constructor fetches, before the peer trains, what every peer needs: the manifest, the
// tokenizer model and the validation shards. assign() names the peer's data shard (the tracker's
// assignment); the feed's thread then fetches that shard's manifest shards in order (each checked
// on disk: fetch/dataset_fetch.hpp), reads each back into memory checked again (its BLAKE2b and
// every token against the vocabulary: data/dataset_reader.hpp) and only then offers it: poll()
// gives the training thread the tokens held so far, a growing prefix of the shard. So the peer
// trains as soon as the first manifest shard is in, and never on a byte that was not checked. A
// second assign() (a new data shard) starts on the new shard; the tokens of the old one stay valid
// for as long as the loop holds them (Held::memory), so it trains on them until the first of the
// new is offered. loco-peer calls assign() at its join and again when a later join (after an
// eviction or a tracker restart) gives it another shard; a trainer peer when its trainer asks for
// its data shard after a round (host/trainer_peer.hpp, data_shard).
//
// A manifest shard no source gives (each failed: unreachable, its hash, ...) stops the feed when
// it has offered nothing yet: the peer has nothing to train on. Once it has offered tokens, it
// says so (stalled(), a warning naming the shard and each source's failure) and tries again every
// `retry`, while the peer trains on what it holds (peer/fed_tokens.hpp).
//
// Threads: the constructor, assign(), poll() and wait() on one thread (the training thread); the
// fetches on the feed's. The destructor stops the feed's thread: a download stops at its next
// chunk, or at its read deadline (HttpGetLimits::io_timeout) when the source is silent.

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "loco/core/time.hpp"
#include "loco/data/batch_sampler.hpp"
#include "loco/data/dataset_manifest.hpp"
#include "loco/fetch/dataset_fetch.hpp"

namespace loco::fetch {

class ShardFeed {
 public:
  // The tokens of a data shard held so far.
  struct Held {
    data::ShardSpec shard;
    data::HeldTokens tokens;
    std::shared_ptr<const std::uint16_t[]> memory;  // where `tokens` points
    bool whole = false;                             // every manifest shard of `shard` is in
  };

  // Fetches the manifest, tokenizer model and validation shards (blocking), then starts the
  // feed's thread. Throws as DatasetFetcher.
  explicit ShardFeed(DatasetFetch plan, Duration retry = std::chrono::seconds(30));
  ~ShardFeed();
  ShardFeed(const ShardFeed&) = delete;
  ShardFeed& operator=(const ShardFeed&) = delete;

  const data::DatasetManifest& manifest() const { return manifest_; }
  const std::filesystem::path& folder() const { return folder_; }

  // The peer's data shard from now on.
  void assign(data::ShardSpec shard);
  // The run's other peers, asked for a train shard before the HTTP sources
  // (DatasetFetcher::set_peer_sources). Any thread.
  void set_peer_sources(PeerSources peers) { fetcher_->set_peer_sources(std::move(peers)); }
  // The tokens of the assigned shard held now, when more are held than at the last call (or it is
  // a new shard's first); nothing otherwise. Rethrows the error that stopped the feed's thread
  // (no source gave a shard, the cap, the disk).
  std::optional<Held> poll();
  // As poll(), but waits until it gives something, the feed stalls (see stalled()), `stop` is set
  // or `deadline` passes (then nothing).
  std::optional<Held> wait(const std::atomic<bool>& stop,
                           std::chrono::steady_clock::time_point deadline =
                               std::chrono::steady_clock::time_point::max());
  // While a manifest shard no source gave is tried again: why (the shard and each source's
  // failure).
  std::optional<std::string> stalled();

 private:
  void run();
  void feed(data::ShardSpec shard, std::uint64_t generation);
  void in_use(data::ShardSpan next);
  // Fetches `file` of the shard of `generation`, trying again every retry_ once tokens were
  // offered (the header comment). False when stopped or the shard changed meanwhile.
  bool fetch_or_stall(const data::DatasetFile& file, data::ShardSpec shard,
                      std::uint64_t generation);

  std::atomic<bool> stop_{false};
  std::unique_ptr<DatasetFetcher> fetcher_;
  data::DatasetManifest manifest_;
  std::filesystem::path folder_;
  std::set<std::string> base_files_;  // the tokenizer model and the validation shards
  data::ShardSpan held_span_;         // the feed thread's: the shards of the last tokens offered
  Duration retry_;

  std::mutex mutex_;  // guards what follows
  std::condition_variable changed_;
  std::optional<data::ShardSpec> assigned_;
  std::uint64_t generation_ = 0;  // counts assign()s
  std::optional<Held> offered_;   // the newest tokens, not yet polled
  bool offered_any_ = false;      // tokens were offered once: a failing shard stalls, not stops
  std::optional<std::string> stalled_;
  bool stall_news_ = false;  // a stall began since the last wait() returned
  std::exception_ptr error_;

  std::thread thread_;  // last: started when the rest is built
};

}  // namespace loco::fetch
