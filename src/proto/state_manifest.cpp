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
  ManifestBuilder builder(round, state.size(), chunk_bytes);
  for (const auto& part : state.parts()) builder.add(part);
  return builder.finish();
}

ManifestBuilder::ManifestBuilder(std::uint64_t round, std::uint64_t total_bytes,
                                 std::uint32_t chunk_bytes)
    : manifest_{.round = round,
                .total_bytes = total_bytes,
                .chunk_bytes = chunk_bytes,
                .chunk_hashes = {}} {
  LOCO_ASSERT(chunk_bytes > 0, "chunks hold at least one byte");
  manifest_.chunk_hashes.reserve((total_bytes + chunk_bytes - 1) / chunk_bytes);
}

void ManifestBuilder::add(std::span<const std::byte> bytes) {
  LOCO_ASSERT(added_ + bytes.size() <= manifest_.total_bytes, "more bytes than the state has");
  while (!bytes.empty()) {
    const std::uint64_t in_chunk = added_ % manifest_.chunk_bytes;
    const std::size_t n = std::min<std::uint64_t>(manifest_.chunk_bytes - in_chunk, bytes.size());
    chunk_.update(bytes.first(n));
    bytes = bytes.subspan(n);
    added_ += n;
    if (added_ % manifest_.chunk_bytes == 0 || added_ == manifest_.total_bytes) {
      manifest_.chunk_hashes.push_back(chunk_.finish());
      chunk_ = Blake2b();
    }
  }
}

StateManifest ManifestBuilder::finish() {
  LOCO_ASSERT(added_ == manifest_.total_bytes, "a manifest finished before its state's end");
  return std::move(manifest_);
}

}  // namespace loco::proto
