#include "state_store.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "loco/checkpoint/atomic_file.hpp"
#include "loco/core/error.hpp"

namespace loco::tracker {

std::optional<proto::TrackerSnapshot> StateFile::load() {
  if (!std::filesystem::exists(path_)) return std::nullopt;
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw Error(ErrorCategory::io, fmt::format("cannot read the state file {}", where()));
  // The size first: a huge file named by mistake is refused before it is read.
  const std::uintmax_t size = std::filesystem::file_size(path_);
  if (size > kMaxStateBytes)
    throw Error(
        ErrorCategory::format,
        fmt::format("state file {} is {} bytes: not a loco-tracker state file", where(), size));
  std::vector<std::byte> bytes(size);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size))
    throw Error(ErrorCategory::io, fmt::format("cannot read the state file {}", where()));
  return proto::decode_snapshot(bytes, where());
}

bool StateFile::save(const proto::TrackerSnapshot& state) {
  const std::vector<std::byte> bytes = proto::encode(state);
  const std::span<const std::byte> parts[] = {bytes};
  checkpoint::write_file_atomically(path_, parts);
  return true;
}

}  // namespace loco::tracker
