// Fuzz target: what a member of an all-gather can send (proto/all_gather.hpp), and the DeMo
// components inside a part (train/demo_components.hpp). The bytes go to a real AllGather of three
// members as member 1's message; a part it accepts is then decoded as DeMo components of a small
// model. The first input byte picks the sender (member 1, or a stranger). Nothing may crash; the
// core never throws, the decoder throws only loco::Error.
// Seeds: a valid part holding valid components.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../proto/tracker_harness.hpp"
#include "fuzz_seeds.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/all_gather.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/train/demo_components.hpp"

namespace {

using namespace loco;
namespace th = loco::proto::testing;

const std::shared_ptr<const ArenaLayout>& layout() {
  static const auto l =
      std::make_shared<const ArenaLayout>(std::vector<TensorSpec>{{"w", {8, 12}}, {"b", {12}}});
  return l;
}

train::DemoComponents& components() {
  static train::DemoComponents c(layout(), train::DemoConfig{.chunk = 4, .topk = 3});
  return c;
}

const std::vector<proto::PeerKey>& members() {
  static const std::vector<proto::PeerKey> m = {th::key(1).public_key(), th::key(2).public_key(),
                                                th::key(3).public_key()};
  return m;
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  Arena momentum(layout()), grads(layout()), sent(layout());
  for (std::size_t i = 0; i < grads.data().size(); ++i)
    grads.data()[i] = static_cast<float>(i % 7) - 3.0f;
  const std::vector<std::byte> part = components().contribute(momentum, grads, 0.1f, sent);
  ByteWriter w;
  w.u8(0);  // from member 1
  w.u8(proto::info(proto::MessageType::all_gather_part).version);
  w.u64(3);
  w.u32(0);
  w.u32(1);
  w.u32(static_cast<std::uint32_t>(part.size()));
  w.bytes(part);
  std::vector<std::uint8_t> seed;
  for (const std::byte b : w.finish()) seed.push_back(std::to_integer<std::uint8_t>(b));
  return {seed};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto body = std::as_bytes(std::span(data + 1, size - 1));
  const proto::PeerKey from = data[0] == 0 ? members()[1] : th::key(9).public_key();
  proto::AllGather gather(proto::AllGatherConfig{.round = 3,
                                                 .attempt = 0,
                                                 .members = members(),
                                                 .self = 0,
                                                 .max_part_bytes = 1 << 16,
                                                 .deadline = kNever},
                          {});
  gather.start();
  gather.on_message(from, body);
  while (gather.poll_transmit()) {
  }
  Arena out(layout());
  // A part the core refused is decoded anyway, from where its bytes would start, so mutations
  // that break the header still exercise the components decoder.
  const std::span<const std::byte> part =
      gather.failure() ? body.subspan(std::min(body.size(), proto::AllGatherConfig::kHeaderBytes))
                       : std::span<const std::byte>(gather.parts()[1]);
  try {
    components().decode(part, out);
  } catch (const Error&) {
  }
  return 0;
}
