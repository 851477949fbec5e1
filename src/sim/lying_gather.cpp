#include "loco/sim/lying_gather.hpp"

#include <algorithm>

#include "loco/core/rng.hpp"

namespace loco::sim {

LyingGather::LyingGather(train::GatherGroup& inner, Behaviour behaviour,
                         std::shared_ptr<const ArenaLayout> layout,
                         const train::SparseLoCoConfig& config, std::uint64_t seed)
    : inner_(inner),
      behaviour_(behaviour),
      seed_(seed),
      components_(layout, config),
      decoded_(layout),
      zero_(layout),
      error_(layout),
      sent_(layout) {}

train::RoundResult LyingGather::run_gather(const train::GatherInput& input) {
  const std::vector<std::byte> lie = rewrite(input.contribution, input.round);
  train::GatherInput lying = input;
  lying.contribution = lie;
  return inner_.run_gather(lying);
}

std::vector<std::byte> LyingGather::rewrite(std::span<const std::byte> honest,
                                            std::uint64_t round) {
  components_.decode(honest, decoded_);
  if (first_.empty()) first_.assign(decoded_.data().begin(), decoded_.data().end());
  const Sent sent = lie(behaviour_, decoded_.data(), first_, counter_u64(seed_, round, 0x5a1));
  std::copy(sent.update.begin(), sent.update.end(), decoded_.data().begin());
  // Encoded as the strategy encodes: e = 0 + (decoded − 0), then its chunk-wise top-k.
  error_.zero();
  return components_.contribute(error_, decoded_, zero_, sent_);
}

}  // namespace loco::sim
