#include "loco/proto/custody_file.hpp"

#include <fmt/format.h>

#include <cstring>

#include "loco/core/byte_io.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/proto/state_transfer.hpp"
#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {
namespace {

constexpr std::string_view kMagic = "loco-custody";
constexpr std::uint8_t kVersion = 1;

}  // namespace

std::vector<std::byte> encode_custody_header(std::string_view run_id,
                                             const StateManifest& manifest) {
  ByteWriter w;
  w.raw(kMagic.data(), kMagic.size());
  w.u8(kVersion);
  w.string(run_id);
  const std::vector<std::byte> m = encode_manifest(manifest);
  w.u32(static_cast<std::uint32_t>(m.size()));
  w.bytes(m);
  return w.finish();
}

CustodyFile decode_custody_file(std::span<const std::byte> bytes, std::string_view name,
                                std::uint64_t max_state_bytes) {
  const std::string what = fmt::format("custody file {}", name);
  ByteReader r(bytes, what, " (damaged or not a loco custody file: move it away)");
  if (bytes.size() < kMagic.size() + 1 ||
      std::memcmp(r.take(kMagic.size()), kMagic.data(), kMagic.size()) != 0)
    r.fail("it does not start with loco-custody");
  const std::uint8_t version = r.u8();
  if (version != kVersion)
    r.fail(fmt::format("format version {}, this build reads {}", version, kVersion));
  CustodyFile f;
  f.run_id = r.string(kMaxTextBytes);
  const std::uint32_t manifest_bytes = r.u32();
  if (manifest_bytes > info(MessageType::state_manifest).max_bytes)
    r.fail(fmt::format("a manifest of {} bytes", manifest_bytes));
  f.manifest = decode_manifest(std::span(r.take(manifest_bytes), manifest_bytes));
  if (f.manifest.total_bytes > max_state_bytes)
    r.fail(fmt::format("a state of {} bytes, above the custody limit of {}", f.manifest.total_bytes,
                       max_state_bytes));
  const std::span<const std::byte> state = r.rest();
  if (state.size() != f.manifest.total_bytes)
    r.fail(fmt::format("{} bytes of state where its manifest says {}", state.size(),
                       f.manifest.total_bytes));
  for (std::uint64_t i = 0; i < f.manifest.chunk_count(); ++i) {
    const auto chunk = state.subspan(i * f.manifest.chunk_bytes, f.manifest.chunk_size(i));
    if (blake2b(chunk) != f.manifest.chunk_hashes[i])
      r.fail(fmt::format("chunk {} does not match its manifest", i));
  }
  f.state.assign(state.begin(), state.end());
  return f;
}

}  // namespace loco::proto
