#pragma once
// A segment owner that returns a wrong mean (Behaviour::wrong_mean), as a member with its own key
// would: its update is honest, but every chunk of the mean it sends in the direct exchange is
// multiplied by `factor` (−1: negated, which no norm check sees; the same bytes to every member),
// and with checked owners the result statement it signs covers the bytes it sent
// (proto/owner_check.hpp), so that only its checker's statement can give it away.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/hash.hpp"
#include "loco/secure/identity.hpp"

namespace loco::sim {

class LyingOwner {
 public:
  LyingOwner(const secure::KeyPair& key, std::string run_id, const std::string& codec,
             float factor);

  // A collective begins: `members` in the group, this member at `self`, a vector of `values`
  // cut into the direct exchange's chunks for `chunk_values` (proto::direct_chunk_values).
  void begin(std::size_t members, std::size_t self, std::size_t values, std::size_t chunk_values);
  // A ring_chunk message this member sends: what it sends instead.
  std::vector<std::byte> rewrite(std::vector<std::byte> body);

 private:
  std::size_t own_chunk_size(std::size_t k) const;

  const secure::KeyPair& key_;
  std::string run_id_;
  std::unique_ptr<compress::Codec> codec_;
  float factor_;
  std::size_t members_ = 0, self_ = 0, values_ = 0, chunk_values_ = 1;
  std::map<std::uint32_t, std::vector<std::byte>> sent_;  // the mean's chunks, as rewritten
  Blake2b sent_hash_;
  std::optional<Digest> sent_digest_;
};

}  // namespace loco::sim
