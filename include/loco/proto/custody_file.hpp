#pragma once
// A custody copy on disk: the run's state of one committed round as the tracker pulled it
// (docs/TRACKER.md, "Checkpoint custody"). Little-endian:
//
//   "loco-custody" ‖ u8 version 1 ‖ u32 length + run id ‖ u32 length + manifest (the
//   state_manifest message body, state_transfer.hpp) ‖ the state's bytes
//
// The manifest's chunk hashes check the bytes and its state hash is the committed majority hash,
// so a damaged or altered file is found when it is read; the file is written atomically.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/proto/state_manifest.hpp"

namespace loco::proto {

struct CustodyFile {
  std::string run_id;
  StateManifest manifest;
  std::vector<std::byte> state;
};

// What precedes the state's bytes in the file.
std::vector<std::byte> encode_custody_header(std::string_view run_id,
                                             const StateManifest& manifest);
// Reads and checks a whole file (`name` names it in errors): sizes before allocation, the state at
// most `max_state_bytes`, every chunk against the manifest. Throws Error(format).
CustodyFile decode_custody_file(std::span<const std::byte> bytes, std::string_view name,
                                std::uint64_t max_state_bytes);

}  // namespace loco::proto
