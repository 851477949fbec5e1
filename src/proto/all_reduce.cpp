#include "loco/proto/all_reduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/core/sum_of_squares.hpp"
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
                                           std::span<const float> update, std::span<float> result) {
  if (algorithm == AllReduceAlgorithm::ring)
    return std::make_unique<RingAllReduce>(std::move(config), update, result);
  return std::make_unique<DirectAllReduce>(std::move(config), update, result);
}

std::vector<std::byte> encode_chunk(const ChunkHeader& header, std::span<const std::byte> payload) {
  ByteWriter w = start_message(MessageType::ring_chunk, kChunkHeaderBytes + payload.size());
  w.u64(header.round);
  w.u32(header.attempt);
  w.u8(header.phase);
  w.u32(header.step);
  w.u32(header.chunk);
  w.bytes(header.signature);
  w.bytes(payload);
  return w.finish();
}

ChunkHeader decode_chunk(std::span<const std::byte> body, std::span<const std::byte>& payload) {
  ByteReader r = open_message(body, MessageType::ring_chunk);
  ChunkHeader h;
  h.round = r.u64();
  h.attempt = r.u32();
  h.phase = r.u8();
  h.step = r.u32();
  h.chunk = r.u32();
  r.bytes(h.signature);
  payload = r.rest();
  return h;
}

std::size_t segment_begin(std::size_t values, std::size_t members, std::size_t g,
                          std::size_t grain) {
  const std::size_t runs = (values + grain - 1) / grain;
  return std::min(values, runs * g / members * grain);
}

std::size_t direct_chunk_values(std::size_t values, std::size_t chunk_values) {
  constexpr std::size_t kChunks = 64, kGrain = 8;
  const std::size_t wanted = ((values + kChunks - 1) / kChunks + kGrain - 1) / kGrain * kGrain;
  return std::min(chunk_values, std::max(kGrain, wanted));
}

AllReduce::AllReduce(AllReduceConfig config, std::size_t values, Segments segments)
    : config_(std::move(config)), values_(values) {
  LOCO_ASSERT(!config_.members.empty() && config_.self < config_.members.size(),
              "an all-reduce needs its members and this member's place");
  LOCO_ASSERT(config_.codec != nullptr, "an all-reduce needs a codec");
  LOCO_ASSERT(config_.weights.empty() || config_.weights.size() == config_.members.size(),
              "an all-reduce's weights are one per member, or none");
  LOCO_ASSERT(config_.chunk_values > 0 && config_.chunk_values <= AllReduceConfig::kMaxChunkValues,
              "chunk size out of range");
  const std::size_t grain = segments == Segments::whole_chunks ? config_.chunk_values : 1;
  const std::size_t n = member_count();
  bounds_.reserve(n + 1);
  for (std::size_t g = 0; g <= n; ++g) bounds_.push_back(segment_begin(values_, n, g, grain));
}

double AllReduce::at_most_weight(std::size_t contributions) const {
  const auto& w = config_.weights;
  const float heaviest = w.empty() ? 1.0f : *std::max_element(w.begin(), w.end());
  return static_cast<double>(contributions) * std::max(1.0, static_cast<double>(heaviest));
}

std::size_t AllReduce::segment_size(std::size_t segment) const {
  return bounds_[segment + 1] - bounds_[segment];
}

AllReduce::Chunk AllReduce::chunk(std::size_t segment, std::size_t k) const {
  const std::size_t at = bounds_[segment] + k * config_.chunk_values;
  return Chunk{at, std::min(config_.chunk_values, bounds_[segment + 1] - at)};
}

std::size_t AllReduce::chunks_in(std::size_t segment) const {
  return (segment_size(segment) + config_.chunk_values - 1) / config_.chunk_values;
}

std::vector<std::byte> AllReduce::encode(std::span<const float> values, std::uint64_t salt) {
  try {
    return config_.codec->encode(
        values, compress::EncodeOptions{.seed = mix64(config_.seed ^ salt), .shape = {}});
  } catch (const Error& e) {
    fail("this member's own values: " + e.message(), {});
    return {};
  }
}

void AllReduce::send(const PeerKey& to, std::uint8_t phase, std::size_t step, std::size_t k,
                     std::span<const std::byte> encoded, const secure::Signature& signature) {
  if (failure_) return;
  Transmit t{.to = to,
             .body = encode_chunk(ChunkHeader{.round = config_.round,
                                              .attempt = config_.attempt,
                                              .phase = phase,
                                              .step = static_cast<std::uint32_t>(step),
                                              .chunk = static_cast<std::uint32_t>(k),
                                              .signature = signature},
                                  encoded)};
  bytes_sent_ += t.body.size();
  out_.push_back(std::move(t));
}

ChunkHeader AllReduce::read_chunk(std::span<const std::byte> body,
                                  std::span<const std::byte>& payload) const {
  const ChunkHeader h = decode_chunk(body, payload);
  if (h.round != config_.round || h.attempt != config_.attempt)
    throw Error(ErrorCategory::protocol,
                fmt::format("it is for round {} attempt {}, this is round {} attempt {}", h.round,
                            h.attempt, config_.round, config_.attempt));
  return h;
}

EvidenceContext evidence_context(const AllReduceConfig& config, std::size_t values) {
  return EvidenceContext{.run_id = config.run_id,
                         .round = config.round,
                         .attempt = config.attempt,
                         .members = config.members,
                         .values = values,
                         .unit_values = direct_chunk_values(values, config.chunk_values),
                         .codec = config.codec,
                         .median_norm = config.median_norm,
                         .norm_limit = config.norm_limit};
}

std::optional<std::string> out_of_bounds(std::span<const float> values, double contributions,
                                         float norm_limit, float median_norm) {
  const double squares = sum_of_squares(values);
  if (!std::isfinite(squares)) return std::string("values that are not finite (NaN or infinite)");
  if (norm_limit <= 0) return std::nullopt;  // no bound asked (a gossip group's θ ‖ v ‖ Δ)
  const double bound = kNormSlack * contributions * norm_limit * median_norm;
  if (std::sqrt(squares) <= bound) return std::nullopt;
  return fmt::format("a chunk of norm {:.4g} where {:.3g} honest update(s) reach at most {:.4g}",
                     std::sqrt(squares), contributions, bound);
}

bool AllReduce::decode_checked(std::span<const std::byte> encoded, std::size_t size,
                               double contributions, const PeerKey& sender) {
  scratch_.resize(size);
  return decode_checked(encoded, std::span(scratch_), contributions, sender);
}

bool AllReduce::decode_checked(std::span<const std::byte> encoded, std::span<float> out,
                               double contributions, const PeerKey& sender) {
  config_.codec->decode(encoded, out);  // Error(format) for a malformed message
  const std::optional<std::string> wrong =
      out_of_bounds(out, contributions, config_.norm_limit, config_.median_norm);
  if (wrong) fail(*wrong, sender);
  return !wrong;
}

std::optional<AllReduce::Transmit> AllReduce::poll_transmit() {
  if (out_.empty()) return std::nullopt;
  Transmit t = std::move(out_.front());
  out_.pop_front();
  return t;
}

void AllReduce::fail(std::string reason, std::optional<PeerKey> suspect) {
  if (failure_) return;
  failure_ = AllReduceFailure{.reason = std::move(reason), .suspect = suspect, .proof = {}};
  out_.clear();
}

void AllReduce::attach_evidence(Evidence evidence) {
  if (failure_) failure_->evidence = std::move(evidence);
}

void AllReduce::fail_proven(std::string reason, const MisconductProof& proof) {
  if (failure_) return;
  // What was queued before is kept: this member's own signed statements, which let the others
  // reach the same proof.
  failure_ = AllReduceFailure{.reason = std::move(reason), .suspect = {}, .proof = proof};
}

}  // namespace loco::proto
