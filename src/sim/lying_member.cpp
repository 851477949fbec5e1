#include "loco/sim/lying_member.hpp"

#include <algorithm>

#include "loco/core/byte_io.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/proto/owner_check.hpp"

namespace loco::sim {

LyingMember::LyingMember(const secure::KeyPair& key, std::string run_id, const std::string& codec,
                         Lie lie, float factor)
    : key_(key),
      run_id_(std::move(run_id)),
      codec_(compress::make_codec(codec)),
      lie_(lie),
      factor_(factor) {}

void LyingMember::begin(std::size_t members, std::size_t self, std::size_t values,
                        std::size_t chunk_values) {
  members_ = members;
  self_ = self;
  values_ = values;
  chunk_values_ = proto::direct_chunk_values(values, chunk_values);
  sent_.clear();
  sent_hash_ = Blake2b();
  sent_digest_.reset();
}

// The direct exchange's segments are whole chunks (proto::segment_begin).
std::size_t LyingMember::own_chunk_size(std::size_t k) const {
  const std::size_t size = proto::segment_begin(values_, members_, self_ + 1, chunk_values_) -
                           proto::segment_begin(values_, members_, self_, chunk_values_);
  return std::min(chunk_values_, size - k * chunk_values_);
}

std::vector<std::byte> LyingMember::rewrite(std::vector<std::byte> body) {
  std::span<const std::byte> payload;
  const proto::ChunkHeader h = proto::decode_chunk(body, payload);
  if (h.phase == 1 && lie_ == Lie::mean) {
    auto it = sent_.find(h.chunk);
    if (it == sent_.end()) {
      std::vector<float> mean(own_chunk_size(h.chunk));
      codec_->decode(payload, mean);
      for (float& x : mean) x *= factor_;
      it = sent_.emplace(h.chunk, codec_->encode(mean)).first;
      sent_hash_.update(it->second);
    }
    return proto::encode_chunk(h, it->second);
  }
  if (h.phase != 3 || h.step != 2) return body;  // not a result statement
  ByteReader r(payload, "a statement");
  const proto::Statement s = proto::read_statement(r);
  Digest signed_digest{};
  if (lie_ == Lie::mean) {
    if (s.segment != self_) return body;  // a segment it checks: honest
    if (!sent_digest_) sent_digest_ = Blake2b(sent_hash_).finish();
    signed_digest = *sent_digest_;
  } else {
    if (s.segment == self_) return body;                          // its own segment: honest
    signed_digest = blake2b(std::as_bytes(std::span(s.digest)));  // no mean has this digest
  }
  ByteWriter w;
  proto::write_statement(w, proto::sign_statement(key_, run_id_, s.round, s.attempt, s.kind,
                                                  s.segment, signed_digest));
  return proto::encode_chunk(h, w.finish());
}

}  // namespace loco::sim
