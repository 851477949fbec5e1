#include "loco/proto/state_manifest.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "loco/core/assert.hpp"

namespace loco::proto {

StateBytes::StateBytes(std::vector<std::span<const std::byte>> parts) : parts_(std::move(parts)) {
  for (const auto& p : parts_) size_ += p.size();
}

void StateBytes::read(std::uint64_t offset, std::span<std::byte> out) const {
  LOCO_ASSERT(offset + out.size() <= size_, "reading past the end of the state");
  for (const auto& part : parts_) {
    if (out.empty()) return;
    if (offset >= part.size()) {
      offset -= part.size();
      continue;
    }
    const std::size_t n = std::min<std::uint64_t>(part.size() - offset, out.size());
    std::memcpy(out.data(), part.data() + offset, n);
    out = out.subspan(n);
    offset = 0;
  }
}

std::uint64_t StateManifest::chunk_size(std::uint64_t index) const {
  LOCO_ASSERT(index < chunk_count(), "chunk index out of range");
  return std::min<std::uint64_t>(chunk_bytes, total_bytes - index * chunk_bytes);
}

Digest StateManifest::state_hash() const {
  Blake2b h;
  constexpr std::string_view kDomain = "loco state v1";
  h.update(std::as_bytes(std::span(kDomain)));
  h.update_u64(round);
  h.update_u64(total_bytes);
  h.update_u64(chunk_bytes);
  for (const Digest& d : chunk_hashes) h.update(std::as_bytes(std::span(d)));
  return h.finish();
}

StateManifest make_manifest(std::uint64_t round, const StateBytes& state,
                            std::uint32_t chunk_bytes) {
  LOCO_ASSERT(chunk_bytes > 0, "chunks hold at least one byte");
  StateManifest m{
      .round = round, .total_bytes = state.size(), .chunk_bytes = chunk_bytes, .chunk_hashes = {}};
  std::vector<std::byte> buffer(std::min<std::uint64_t>(chunk_bytes, state.size()));
  for (std::uint64_t at = 0; at < state.size(); at += chunk_bytes) {
    const std::size_t n = std::min<std::uint64_t>(chunk_bytes, state.size() - at);
    state.read(at, std::span(buffer).first(n));
    m.chunk_hashes.push_back(blake2b(std::span<const std::byte>(buffer).first(n)));
  }
  return m;
}

}  // namespace loco::proto
