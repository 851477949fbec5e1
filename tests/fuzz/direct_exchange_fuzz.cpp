// Fuzz target: a member that lies in the direct exchange (proto/direct_allreduce.hpp), in
// well-formed messages and not. Four members run real DirectAllReduce cores; three are honest and
// deliver every message in order, and the fourth's messages pass through the input, which picks
// for each what the liar does with it: send it, drop it, flip a byte, scale its values (re-encoded,
// a valid message of a larger update), send it to another member, send it twice, hold it back,
// or stamp it with another round or attempt. The first byte picks the trim (0 or 1), the codec
// and whether owners are checked (owner_check.hpp). Then the invariants: nothing throws out of a
// core; a member that fails names the liar (an honest member is never blamed), or holds a proof
// that shows the liar at fault (with its partner, for an owner and checker that disagree), or
// evidence (unit_evidence.hpp) that shows the liar to any other member (the liar signs what it
// scales); every segment an honest member owns is the same, bit for bit, at every honest member
// that finished, and finite; an honest member that finished holds only finite values. Unchecked,
// equivocation in the liar's own segment (different means to different members) is not a failure
// here: the commit vote catches it, each member reporting the hash of what it holds. Checked,
// every segment is the same at every honest member that finished, the liar's too.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "../proto/tracker_harness.hpp"
#include "fuzz_seeds.hpp"
#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/direct_allreduce.hpp"

namespace {

using namespace loco;
namespace th = loco::proto::testing;

constexpr std::size_t kMembers = 4;
constexpr std::size_t kLiar = 3;
constexpr std::size_t kValues = 96;  // 24 a segment, 3 chunks of 8
constexpr std::size_t kChunkValues = 8;

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

struct InFlight {
  std::size_t from = 0;
  std::size_t to = 0;
  std::vector<std::byte> body;
};

// The input, read one byte at a time (0 once it is used up).
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// The liar's message to member `to` with its values scaled by `factor`, re-encoded and signed
// again with the liar's key (unit_evidence.hpp): well-formed, larger, and its sender's.
std::vector<std::byte> scaled(const std::vector<std::byte>& body, std::size_t to,
                              const compress::Codec& codec, const secure::KeyPair& liar,
                              float factor) {
  std::span<const std::byte> payload;
  proto::ChunkHeader h = proto::decode_chunk(body, payload);
  if (h.phase == 3) return body;           // a statement: no values
  const std::size_t count = kChunkValues;  // every chunk of this layout has 8 values
  std::vector<float> values(count);
  codec.decode(payload, values);
  for (float& v : values) v *= factor;
  const std::vector<std::byte> bytes = codec.encode(values);
  // Segment g is units 3g .. 3g + 2: phase 0 goes to its owner, 2 to its checker (the next
  // member), 1 is the liar's own segment's mean.
  const std::size_t segment = h.phase == 1   ? kLiar
                              : h.phase == 0 ? to
                                             : (to + kMembers - 1) % kMembers;
  const bool mean = h.phase == 1;
  h.signature = proto::sign_unit(
      liar, "fuzz", h.round, mean ? h.attempt : 0,
      mean ? proto::StatementKind::mean_unit : proto::StatementKind::update_unit,
      static_cast<std::uint32_t>(segment * kValues / kMembers / kChunkValues + h.chunk), bytes);
  return proto::encode_chunk(h, bytes);
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  // An honest liar, then one that scales, flips, drops and redirects.
  return {{0}, {1, 3, 200, 2, 5, 1, 4, 2, 0, 6, 0, 7, 1}, {4}, {5, 3, 200, 2, 5, 1, 4, 2, 0, 6, 0}};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  const std::uint8_t setup = in.next();
  const std::size_t trim = setup & 1;
  const auto codec = compress::make_codec((setup & 2) ? "fp32" : "int8:block=8");
  const bool checked = (setup & 4) != 0;
  std::vector<secure::KeyPair> signers;
  std::vector<proto::PeerKey> keys;
  for (std::size_t m = 0; m < kMembers; ++m) {
    signers.push_back(th::key(static_cast<std::uint8_t>(m + 1)));
    keys.push_back(signers.back().public_key());
  }

  std::vector<std::vector<float>> values(kMembers, std::vector<float>(kValues));
  for (std::size_t m = 0; m < kMembers; ++m)
    for (std::size_t i = 0; i < kValues; ++i)
      values[m][i] = 0.1f * std::sin(static_cast<float>(i * (m + 1)));  // norm about 0.7
  const auto config_of = [&](std::size_t m) {
    return proto::AllReduceConfig{.round = 7,
                                  .attempt = 2,
                                  .members = keys,
                                  .self = m,
                                  .chunk_values = kChunkValues,
                                  .codec = codec.get(),
                                  .seed = 7002,
                                  .median_norm = 1.0f,
                                  .norm_limit = 10.0f,
                                  .trim = trim,
                                  .weights = {},
                                  .buffers = nullptr,
                                  .check_owners = checked,
                                  .signer = &signers[m],
                                  .run_id = "fuzz"};
  };
  std::vector<std::unique_ptr<proto::AllReduce>> cores;
  for (std::size_t m = 0; m < kMembers; ++m)
    cores.push_back(std::make_unique<proto::DirectAllReduce>(config_of(m), values[m], values[m]));

  std::deque<InFlight> queue;
  const auto drain = [&](std::size_t m) {
    while (auto t = cores[m]->poll_transmit()) {
      const auto to =
          static_cast<std::size_t>(std::find(keys.begin(), keys.end(), t->to) - keys.begin());
      queue.push_back(InFlight{.from = m, .to = to, .body = std::move(t->body)});
    }
  };
  try {
    for (std::size_t m = 0; m < kMembers; ++m) {
      cores[m]->start();
      drain(m);
    }
    std::size_t held = 0;  // messages put back; a bound, so that holding back ends
    while (!queue.empty()) {
      InFlight msg = std::move(queue.front());
      queue.pop_front();
      if (msg.from == kLiar) {
        switch (in.next() % 8) {
          case 0: break;     // as it is
          case 1: continue;  // dropped
          case 2: {          // one byte flipped
            const std::size_t at = in.next() % msg.body.size();
            msg.body[at] ^= std::byte{static_cast<std::uint8_t>(1 + in.next() % 255)};
            break;
          }
          case 3:  // its values scaled: a valid message of an update up to 256x larger
            msg.body =
                scaled(msg.body, msg.to, *codec, signers[kLiar], static_cast<float>(1 + in.next()));
            break;
          case 4: msg.to = in.next() % kLiar; break;  // to another (honest) member
          case 5: queue.push_back(msg); break;        // twice
          case 6:                                     // later
            if (held++ < 64) {
              queue.push_back(std::move(msg));
              continue;
            }
            break;
          case 7: {  // another round or attempt
            std::span<const std::byte> payload;
            proto::ChunkHeader h = proto::decode_chunk(msg.body, payload);
            if (in.next() & 1)
              h.round += 1 + in.next() % 3;
            else
              h.attempt ^= 1;
            msg.body = proto::encode_chunk(h, payload);
            break;
          }
        }
      }
      if (msg.to == kLiar) {
        cores[kLiar]->on_message(keys[msg.from], msg.body);
        drain(kLiar);
        continue;
      }
      cores[msg.to]->on_message(keys[msg.from], msg.body);
      drain(msg.to);
    }
  } catch (const std::exception& e) {
    broken(std::string("a core threw: ") + e.what());
  }

  // The invariants, over the honest members.
  const proto::AllReduceConfig config = config_of(0);  // the context views its members
  const proto::EvidenceContext evidence = proto::evidence_context(config, kValues);
  const std::size_t segment = kValues / kMembers;
  for (std::size_t m = 0; m < kLiar; ++m) {
    const auto& failure = cores[m]->failure();
    if (failure && failure->suspect && *failure->suspect != keys[kLiar])
      broken("member " + std::to_string(m) + " blamed an honest member: " + failure->reason);
    if (failure && failure->proof &&
        !proto::proven_at_fault("fuzz", *failure->proof, keys).contains(keys[kLiar]))
      broken("member " + std::to_string(m) + "'s proof does not show the liar: " + failure->reason);
    if (failure && failure->evidence &&
        (failure->evidence->accused != keys[kLiar] ||
         !proto::what_evidence_shows(*failure->evidence, evidence)))
      broken("member " + std::to_string(m) +
             "'s evidence does not show the liar: " + failure->reason);
    if (!cores[m]->done()) continue;
    for (const float v : values[m])
      if (!std::isfinite(v)) broken("member " + std::to_string(m) + " holds a value not finite");
    for (std::size_t other = 0; other < m; ++other) {
      if (!cores[other]->done()) continue;
      for (std::size_t g = 0; g < (checked ? kMembers : kLiar); ++g)  // honest owners' segments
        if (std::memcmp(values[m].data() + g * segment, values[other].data() + g * segment,
                        segment * sizeof(float)) != 0)
          broken("honest owner " + std::to_string(g) + "'s segment differs between members " +
                 std::to_string(other) + " and " + std::to_string(m));
    }
  }
  return 0;
}
