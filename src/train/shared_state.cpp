#include "loco/train/shared_state.hpp"

#include <fmt/format.h>

#include <cstring>

#include "loco/core/error.hpp"

namespace loco::train {

SharedState::SharedState(const std::shared_ptr<const ArenaLayout>& layout,
                         std::vector<std::string> names) {
  for (std::string& name : names) parts_.push_back(Part{std::move(name), Arena(layout)});
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
