#include "etcd_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "loco/core/error.hpp"

namespace loco::tracker {

std::optional<std::vector<std::byte>> EtcdState::load() {
  const etcd::RangeResult found = store_.range(etcd::one_key(key_));
  if (found.kvs.empty()) return std::nullopt;
  const std::string& value = found.kvs.front().value;
  if (value.size() > kMaxStateBytes)
    throw Error(ErrorCategory::format,
                fmt::format("{} holds {} bytes: not a loco-tracker state", where(), value.size()));
  const auto* first = reinterpret_cast<const std::byte*>(value.data());
  return std::vector<std::byte>(first, first + value.size());
}

bool EtcdState::save(std::span<const std::byte> state) {
  if (state.size() > kMaxStateBytes)
    throw Error(ErrorCategory::resource,
                fmt::format("a state of {} bytes, over the {} one etcd request holds", state.size(),
                            kMaxStateBytes));
  etcd::Put put{key_, std::string(reinterpret_cast<const char*>(state.data()), state.size()), 0};
  if (election_.standing() != etcd::Election::Standing::leading) return false;  // resigned, lost
  try {
    return !election_.fenced({.compare = {}, .success = {std::move(put)}, .failure = {}}).deposed;
  } catch (const Error& e) {
    // Written or not, it cannot be announced: a leader that cannot write cannot prove it leads.
    spdlog::error("cannot save the state to {}: {}", where(), e.what());
    return false;
  }
}

}  // namespace loco::tracker
