#include "loco/train/shared_state.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "loco/core/error.hpp"

namespace loco::train {

SharedState::SharedState(const std::shared_ptr<const ArenaLayout>& layout,
                         std::vector<std::string> names) {
  for (std::string& name : names) parts_.push_back(Part{std::move(name), Arena(layout)});
}

proto::StateManifest hash_chunks(
    std::uint64_t round, std::uint64_t total_bytes,
    const std::function<void(std::uint64_t chunk, std::span<std::byte> out)>& fill) {
  proto::StateManifest m{.round = round,
                         .total_bytes = total_bytes,
                         .chunk_bytes = proto::kStateChunkBytes,
                         .chunk_hashes = {}};
  const auto chunks = static_cast<std::int64_t>((total_bytes + m.chunk_bytes - 1) / m.chunk_bytes);
  m.chunk_hashes.resize(static_cast<std::size_t>(chunks));
  // One chunk (a state under 1 MiB, DeMo's on the tiny model): the calling thread alone. A team
  // would cost more than the hash, and on a busy machine its threads spin at the region's end,
  // taking the cores from the compute thread (measured over the swarm: docs/STRATEGIES.md).
#pragma omp parallel if (chunks > 1)
  {
    std::vector<std::byte> buffer(m.chunk_bytes);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < chunks; ++i) {
      const auto index = static_cast<std::uint64_t>(i);
      const std::span<std::byte> out = std::span(buffer).first(m.chunk_size(index));
      fill(index, out);
      m.chunk_hashes[index] = blake2b(std::span<const std::byte>(out));
    }
  }
  return m;
}

proto::StateManifest SharedState::manifest() const {
  const proto::StateBytes all = bytes();
  return hash_chunks(round_, all.size(), [&](std::uint64_t chunk, std::span<std::byte> out) {
    all.read(chunk * proto::kStateChunkBytes, out);
  });
}

proto::StateBytes SharedState::bytes() const {
  std::vector<std::span<const std::byte>> spans;
  for (const Part& p : parts_) spans.push_back(std::as_bytes(p.arena.data()));
  return proto::StateBytes(std::move(spans));
}

void SharedState::load(std::uint64_t round, std::span<const std::byte> bytes) {
  if (bytes.size() != this->bytes().size())
    throw Error(ErrorCategory::format,
                fmt::format("a shared state of {} bytes where this run's has {}", bytes.size(),
                            this->bytes().size()));
  for (Part& p : parts_) {
    const std::span<float> out = p.arena.data();
    std::memcpy(out.data(), bytes.data(), out.size_bytes());
    bytes = bytes.subspan(out.size_bytes());
  }
  round_ = round;
}

}  // namespace loco::train
