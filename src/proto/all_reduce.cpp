#include "loco/proto/all_reduce.hpp"

#include <fmt/format.h>

#include <cmath>

#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/direct_allreduce.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/proto/ring_allreduce.hpp"

namespace loco::proto {
namespace {

// Quantization moves a norm by a little at each hop; the check is for updates many times too big.
constexpr double kNormSlack = 1.1;

}  // namespace

AllReduceAlgorithm parse_all_reduce_algorithm(std::string_view name) {
  if (name == "ring") return AllReduceAlgorithm::ring;
  if (name == "direct") return AllReduceAlgorithm::direct;
  throw Error(ErrorCategory::invalid_argument,
              fmt::format("unknown all-reduce '{}': choose \"direct\" or \"ring\"", name));
}

std::string_view name(AllReduceAlgorithm algorithm) {
  return algorithm == AllReduceAlgorithm::ring ? "ring" : "direct";
}

std::unique_ptr<AllReduce> make_all_reduce(AllReduceAlgorithm algorithm, AllReduceConfig config,
                                           std::span<float> values) {
  if (algorithm == AllReduceAlgorithm::ring)
    return std::make_unique<RingAllReduce>(std::move(config), values);
  return std::make_unique<DirectAllReduce>(std::move(config), values);
}

std::vector<std::byte> encode_chunk(const ChunkHeader& header, std::span<const std::byte> payload) {
  ByteWriter w(kChunkHeaderBytes + payload.size());
  w.u8(info(MessageType::ring_chunk).version);
  w.u64(header.round);
  w.u32(header.attempt);
  w.u8(header.phase);
  w.u32(header.step);
  w.u32(header.chunk);
  w.bytes(payload);
  return w.finish();
}

ChunkHeader decode_chunk(std::span<const std::byte> body, std::span<const std::byte>& payload) {
  const MessageInfo& message = info(MessageType::ring_chunk);
  ByteReader r(body, message.name);
  if (body.size() > message.max_bytes) r.fail("above its size limit");
  if (r.u8() != message.version) r.fail("another version: the two ends run different releases");
  ChunkHeader h;
  h.round = r.u64();
  h.attempt = r.u32();
  h.phase = r.u8();
  h.step = r.u32();
  h.chunk = r.u32();
  payload = r.rest();
  return h;
}

std::vector<std::byte> encode_values(const compress::Codec& codec, std::span<const float> values,
                                     std::uint64_t seed, std::uint64_t salt) {
  return codec.encode(values, compress::EncodeOptions{.seed = mix64(seed ^ salt), .shape = {}});
}

std::optional<std::string> check_received(std::span<const float> values, std::size_t contributions,
                                          float median_norm, float norm_limit) {
  double squares = 0;
  for (const float v : values) {
    if (!std::isfinite(v)) return "it sent values that are not finite (NaN or infinite)";
    squares += static_cast<double>(v) * v;
  }
  if (median_norm <= 0) return std::nullopt;
  const double bound = kNormSlack * static_cast<double>(contributions) * norm_limit * median_norm;
  if (std::sqrt(squares) > bound)
    return fmt::format("a chunk of norm {:.4g} where {} honest update(s) reach at most {:.4g}",
                       std::sqrt(squares), contributions, bound);
  return std::nullopt;
}

}  // namespace loco::proto
