#include "loco/sim/ledger.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "loco/secure/identity.hpp"

namespace loco::sim {
namespace {

// Rings and groups are checked while their round is within this many of the newest one seen (in
// gossip mode a group's survivors may finish a round long after other peers moved on).
constexpr std::uint64_t kKeptRounds = 8;

double seconds(TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

void Ledger::violation(TimePoint now, const std::string& what) {
  violations_.push_back(fmt::format("t={:.6f}s: {}", seconds(now), what));
}

void Ledger::all_reduce_started(TimePoint /*now*/, const proto::PeerKey& peer, std::uint64_t round,
                                std::uint32_t attempt, std::span<const float> delta) {
  if (tolerance_ < 0) return;
  // Rings of rounds long over: keep only the recent ones.
  while (!updates_.empty() && updates_.begin()->first.first + kKeptRounds < round)
    updates_.erase(updates_.begin());
  updates_[{round, attempt}][peer].assign(delta.begin(), delta.end());
}

void Ledger::all_reduce_done(TimePoint now, const proto::PeerKey& peer, std::uint64_t round,
                             std::uint32_t attempt, const std::vector<proto::PeerKey>& members,
                             std::size_t trim, std::span<const std::uint64_t> tokens,
                             std::span<const float> mean) {
  if (tolerance_ < 0) return;
  const auto& updates = updates_[{round, attempt}];
  std::vector<const std::vector<float>*> contributions;
  double largest = 0;
  for (const proto::PeerKey& m : members) {
    const auto it = updates.find(m);
    if (it == updates.end()) {
      violation(now, fmt::format("peer {} finished the ring of round {} attempt {} before member "
                                 "{} started it",
                                 secure::short_id(peer), round, attempt, secure::short_id(m)));
      return;
    }
    contributions.push_back(&it->second);
    for (const float x : it->second) largest = std::max(largest, std::abs(static_cast<double>(x)));
  }
  double worst = 0;
  std::vector<std::pair<double, double>> column(members.size());  // (value, weight)
  for (std::size_t j = 0; j < mean.size(); ++j) {
    for (std::size_t m = 0; m < members.size(); ++m)
      column[m] = {(*contributions[m])[j], tokens.empty() ? 1.0 : static_cast<double>(tokens[m])};
    std::sort(column.begin(), column.end());
    double sum = 0, weight = 0;
    for (std::size_t m = trim; m < members.size() - trim; ++m) {
      sum += column[m].first * column[m].second;
      weight += column[m].second;
    }
    worst = std::max(worst, std::abs(sum / weight - mean[j]));
  }
  if (worst > tolerance_ * std::max(largest, 1e-30))
    violation(now, fmt::format("peer {}: the ring of round {} attempt {} gave a mean {:.3g} away "
                               "from the mean of its {} members' updates (a partial average?)",
                               secure::short_id(peer), round, attempt, worst, members.size()));
}

void Ledger::applied(TimePoint now, const proto::PeerKey& peer, std::uint64_t from_round,
                     std::uint64_t round) {
  ++installs_;
  highest_ = std::max(highest_, round);
  if (round != from_round + 1)
    violation(now, fmt::format("peer {} installed round {} on the state of round {}",
                               secure::short_id(peer), round, from_round));
  auto& last = last_round_[peer];
  if (last >= round)
    violation(now, fmt::format("peer {} applied round {} again (it had reached round {})",
                               secure::short_id(peer), round, last));
  last = std::max(last, round);
}

void Ledger::installed(TimePoint now, const proto::PeerKey& peer, std::uint64_t from_round,
                       std::uint64_t round, const Digest& hash) {
  applied(now, peer, from_round, round);
  const auto [it, first] = installed_hash_.emplace(round, hash);
  if (!first && it->second != hash)
    violation(now, fmt::format("peer {} installed round {} with state {}, another peer with {}",
                               secure::short_id(peer), round, to_hex(hash).substr(0, 12),
                               to_hex(it->second).substr(0, 12)));
  if (const auto c = committed_hash_.find(round); c != committed_hash_.end() && c->second != hash)
    violation(now, fmt::format("peer {} installed round {} with state {}, the tracker committed {}",
                               secure::short_id(peer), round, to_hex(hash).substr(0, 12),
                               to_hex(c->second).substr(0, 12)));
}

void Ledger::group_installed(TimePoint now, const proto::PeerKey& peer, std::uint64_t from_round,
                             std::uint64_t round, std::uint32_t attempt,
                             const std::vector<proto::PeerKey>& members, const Digest& hash) {
  applied(now, peer, from_round, round);
  if (members.size() == 1) ++applied_alone_;
  // Groups of rounds far behind every peer are over: keep the recent ones.
  while (!group_hash_.empty() && std::get<0>(group_hash_.begin()->first) + kKeptRounds < round)
    group_hash_.erase(group_hash_.begin());
  const auto [it, first] = group_hash_.emplace(std::tuple(round, attempt, members), hash);
  if (!first && it->second != hash)
    violation(now,
              fmt::format("peer {} applied round {} attempt {} of a group of {} with state {}, "
                          "another member with {}",
                          secure::short_id(peer), round, attempt, members.size(),
                          to_hex(hash).substr(0, 12), to_hex(it->second).substr(0, 12)));
}

void Ledger::fetched(TimePoint now, const proto::PeerKey& peer, std::uint64_t round,
                     const Digest& hash) {
  auto& last = last_round_[peer];
  last = std::max(last, round);
  if (const auto it = installed_hash_.find(round);
      it != installed_hash_.end() && it->second != hash)
    violation(now, fmt::format("peer {} recovered round {} with state {}; the peers that applied "
                               "it hold {}",
                               secure::short_id(peer), round, to_hex(hash).substr(0, 12),
                               to_hex(it->second).substr(0, 12)));
}

void Ledger::copied(TimePoint now, const proto::PeerKey& peer, std::uint64_t round,
                    const Digest& hash) {
  last_round_[peer] = round;
  // What this key applied alone after `round` in its earlier life is another lineage's.
  std::erase_if(group_hash_, [&](const auto& entry) {
    const auto& [group_round, attempt, members] = entry.first;
    return group_round > round && members.size() == 1 && members[0] == peer;
  });
  bool installed = false;
  for (auto it = group_hash_.lower_bound({round, 0, {}});
       it != group_hash_.end() && std::get<0>(it->first) == round; ++it)
    installed = installed || it->second == hash;
  if (!installed && round + kKeptRounds > highest_)
    violation(now, fmt::format("peer {} copied round {} with state {}, which no group installed",
                               secure::short_id(peer), round, to_hex(hash).substr(0, 12)));
}

std::optional<Digest> Ledger::installed_hash(std::uint64_t round) const {
  const auto it = installed_hash_.find(round);
  if (it == installed_hash_.end()) return std::nullopt;
  return it->second;
}

void Ledger::committed(TimePoint now, std::uint64_t round, const Digest& hash) {
  const auto [it, first] = committed_hash_.emplace(round, hash);
  if (!first)
    violation(now, fmt::format("the tracker committed round {} twice ({} then {})", round,
                               to_hex(it->second).substr(0, 12), to_hex(hash).substr(0, 12)));
}

}  // namespace loco::sim
