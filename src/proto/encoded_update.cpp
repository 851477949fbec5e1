#include "loco/proto/encoded_update.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/unit_evidence.hpp"

namespace loco::proto {

std::uint64_t EncodedUpdate::unit_seed(std::uint64_t seed, const PeerKey& member,
                                       std::size_t first) {
  std::uint64_t word = 0;  // the key's first eight bytes: members' streams differ
  for (std::size_t i = 0; i < 8; ++i) word = (word << 8) | member.bytes[i];
  return counter_u64(seed, word, first);
}

namespace {

// A team costs more than it saves on a small update (the simulator encodes thousands of them,
// and threads that spin-wait for a descheduled partner slowed its runs fourfold on 2 cores).
bool worth_a_team(int team, std::size_t units, std::size_t values) {
  return team > 1 && units > 1 && values >= EncodedUpdate::kParallelValues;
}

int team_of(int threads) {
  return std::max(1, threads > 0 ? threads : omp_get_max_threads());
}

}  // namespace

EncodedUpdate::EncodedUpdate(const compress::Codec& codec, std::span<const float> values,
                             std::size_t unit_values, std::uint64_t seed, const PeerKey& member,
                             int threads)
    : values_(values.size()), unit_values_(unit_values) {
  LOCO_ASSERT(unit_values_ > 0, "an encoded update's units hold values");
  const std::size_t count = (values_ + unit_values_ - 1) / unit_values_;
  units_.resize(count);
  digests_.resize(count);
  // Per unit: the encode's error, if it threw (an exception must not leave the parallel region).
  std::vector<std::string> errors(count);
  const int team = team_of(threads);
  const auto last = static_cast<std::int64_t>(count);
  const bool parallel = worth_a_team(team, count, values_);
#pragma omp parallel for schedule(static) num_threads(team) if (parallel)
  for (std::int64_t i = 0; i < last; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const std::size_t first = u * unit_values_;
    try {
      units_[u] = codec.encode(
          values.subspan(first, std::min(unit_values_, values_ - first)),
          compress::EncodeOptions{.seed = unit_seed(seed, member, first), .shape = {}});
      digests_[u] = blake2b(std::span<const std::byte>(units_[u]));  // while in cache
    } catch (const Error& e) {
      errors[u] = e.message();
    }
  }
  const auto failed =
      std::find_if(errors.begin(), errors.end(), [](const std::string& e) { return !e.empty(); });
  if (failed != errors.end()) {
    failure_ =
        fmt::format("values {} on: {}",
                    static_cast<std::size_t>(failed - errors.begin()) * unit_values_, *failed);
    units_.clear();
    digests_.clear();
  }
}

void EncodedUpdate::sign(const secure::KeyPair& key, std::string_view run_id, std::uint64_t round,
                         int threads) {
  signatures_.resize(units_.size());
  const int team = team_of(threads);
  const auto last = static_cast<std::int64_t>(units_.size());
#pragma omp parallel for schedule(static) \
    num_threads(team) if (worth_a_team(team, units_.size(), values_))
  for (std::int64_t i = 0; i < last; ++i) {
    const auto u = static_cast<std::size_t>(i);
    signatures_[u] = sign_statement(key, run_id, round, 0, StatementKind::update_unit,
                                    static_cast<std::uint32_t>(u), digests_[u])
                         .signature;
  }
}

const secure::Signature& EncodedUpdate::signature(std::size_t u) const {
  static const secure::Signature kUnsigned{};
  return u < signatures_.size() ? signatures_[u] : kUnsigned;
}

std::size_t EncodedUpdate::bytes() const {
  std::size_t total = 0;
  for (const std::vector<std::byte>& u : units_) total += u.size();
  return total;
}

std::vector<float> EncodedUpdate::decode(const compress::Codec& codec) const {
  std::vector<float> out(values_);
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const std::size_t first = u * unit_values_;
    codec.decode(units_[u], std::span(out).subspan(first, std::min(unit_values_, values_ - first)));
  }
  return out;
}

}  // namespace loco::proto
