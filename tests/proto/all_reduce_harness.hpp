#pragma once
// All-reduce members in memory (all_reduce_test.cpp, checked_owners_test.cpp): each member's
// update, its collective, and the links between them, delivered in order on each link and
// interleaved at random across links.

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/all_reduce.hpp"
#include "tracker_harness.hpp"

namespace loco::proto::testing {

inline constexpr std::string_view kHarnessRun = "all-reduce test run";

inline std::vector<PeerKey> ring_of(std::size_t n) {
  std::vector<PeerKey> members;
  for (std::size_t i = 0; i < n; ++i)
    members.push_back(key(static_cast<std::uint8_t>(i + 1)).public_key());
  return members;
}

inline std::vector<std::vector<float>> random_vectors(std::size_t n, std::size_t size,
                                                      std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<float>> out(n, std::vector<float>(size));
  for (auto& v : out)
    for (float& x : v) x = rng.normal();
  return out;
}

inline constexpr AllReduceAlgorithm kRing = AllReduceAlgorithm::ring;
inline constexpr AllReduceAlgorithm kDirect = AllReduceAlgorithm::direct;

struct AllReduceHarness {
  std::unique_ptr<compress::Codec> codec;
  std::vector<secure::KeyPair> signers;  // member i's key pair, key(i + 1)
  std::vector<PeerKey> members;
  std::vector<std::vector<float>> values;   // each member's update, then its mean
  std::vector<std::vector<float>> updates;  // with `apart`: the updates, values the means
  std::vector<std::unique_ptr<AllReduce>> nodes;
  std::map<std::pair<std::size_t, std::size_t>, std::deque<std::vector<std::byte>>> links;
  // A liar's hand on what member `from` sends `to` (checked_owners_test.cpp), if any.
  std::function<void(std::size_t from, std::size_t to, std::vector<std::byte>& body)> tamper;

  AllReduceHarness(AllReduceAlgorithm algorithm, std::size_t n, std::size_t size,
                   const std::string& codec_spec, std::size_t chunk, std::uint64_t seed,
                   float median = 0, std::size_t trim = 0, std::vector<float> weights = {},
                   bool apart = false, bool check_owners = false)
      : codec(compress::make_codec(codec_spec)),
        members(ring_of(n)),
        values(random_vectors(n, size, seed)) {
    for (std::size_t i = 0; i < n; ++i) signers.push_back(key(static_cast<std::uint8_t>(i + 1)));
    if (apart) {
      updates = values;
      for (auto& v : values) std::fill(v.begin(), v.end(), std::nanf(""));  // all overwritten
    }
    for (std::size_t i = 0; i < n; ++i)
      nodes.push_back(make_all_reduce(algorithm,
                                      AllReduceConfig{.round = 7,
                                                      .attempt = 1,
                                                      .members = members,
                                                      .self = i,
                                                      .chunk_values = chunk,
                                                      .codec = codec.get(),
                                                      .seed = seed,
                                                      .median_norm = median,
                                                      .norm_limit = median > 0 ? 10.0f : 0.0f,
                                                      .trim = trim,
                                                      .weights = weights,
                                                      .buffers = nullptr,
                                                      .check_owners = check_owners,
                                                      .signer = &signers[i],
                                                      .run_id = std::string(kHarnessRun)},
                                      apart ? updates[i] : values[i], values[i]));
  }

  void start_all() {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      nodes[i]->start();
      collect(i);
    }
  }

  std::size_t index_of(const PeerKey& k) const {
    return static_cast<std::size_t>(std::find(members.begin(), members.end(), k) - members.begin());
  }
  void collect(std::size_t i) {
    while (auto t = nodes[i]->poll_transmit()) {
      const std::size_t to = index_of(t->to);
      if (tamper) tamper(i, to, t->body);
      links[{i, to}].push_back(std::move(t->body));
    }
  }

  // Starts every member and delivers everything, one message at a time from a link picked at
  // random.
  void run(std::uint64_t seed) {
    start_all();
    deliver(seed);
  }
  void deliver(std::uint64_t seed) {
    Rng rng(seed);
    for (;;) {
      std::vector<std::pair<std::size_t, std::size_t>> busy;
      for (auto& [link, queue] : links)
        if (!queue.empty()) busy.push_back(link);
      if (busy.empty()) return;
      const auto [from, to] = busy[rng.below(busy.size())];
      const auto body = std::move(links[{from, to}].front());
      links[{from, to}].pop_front();
      nodes[to]->on_message(members[from], body);
      collect(to);
    }
  }

  // Delivers in waves: every message in flight arrives at once (one link latency), and what they
  // cause goes in the next wave. Returns the number of waves until nothing is in flight.
  std::size_t waves() {
    start_all();
    std::size_t count = 0;
    for (;;) {
      auto in_flight = std::exchange(links, {});
      bool any = false;
      for (auto& [link, queue] : in_flight)
        for (auto& body : queue) {
          any = true;
          nodes[link.second]->on_message(members[link.first], body);
          collect(link.second);
        }
      if (!any) return count;
      ++count;
    }
  }
};

}  // namespace loco::proto::testing
