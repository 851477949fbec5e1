#include "loco/proto/segment_judge.hpp"

#include <algorithm>
#include <utility>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"

namespace loco::proto {
namespace {

std::size_t chunks_between(std::size_t begin, std::size_t end, std::size_t unit) {
  return (end - begin + unit - 1) / unit;
}

}  // namespace

std::optional<Finding> judge_finding(std::string_view run_id, const JudgeCall& call,
                                     const Verdict& verdict) {
  const Statement& v = verdict.judged;
  if (v.signer != call.judge || v.kind != StatementKind::verdict || v.round != call.round ||
      v.attempt != call.attempt || v.segment != call.segment || !verify_statement(run_id, v))
    return std::nullopt;
  if (!verdict.decided()) return Finding::undecided;
  const bool owner = v.digest == call.owner_result.digest;
  const bool checker = v.digest == call.checker_result.digest;
  if (owner == checker) return Finding::neither_matches;  // both is impossible: they differ
  return owner ? Finding::checker_lied : Finding::owner_lied;
}

SegmentJudge::SegmentJudge(AllReduceConfig config, const EncodedUpdate& own, const JudgeCall& call)
    : config_(std::move(config)),
      call_(call),
      values_(own.values()),
      begin_(segment_begin(values_, config_.members.size(), call.segment, own.unit_values())),
      end_(segment_begin(values_, config_.members.size(), call.segment + 1, own.unit_values())),
      unit_(own.unit_values()),
      sum_(config_.members.size(), chunks_between(begin_, end_, unit_), config_.trim,
           config_.weights, nullptr, config_.codec),
      bad_(config_.members.size(), false) {
  const std::size_t n = config_.members.size();
  LOCO_ASSERT(config_.signer != nullptr && config_.self < n && call.segment < n && n >= 3,
              "a judge signs, is a member, and is neither the owner nor the checker");
  LOCO_ASSERT(config_.self != call.segment && config_.self != checker_of(call.segment, n),
              "a judge is neither party to the dispute");
  // Its own contribution, as the owner read it: this member's encoded units, copied (the judge
  // may outlive the round, and the encoded update with it).
  own_.reserve(chunks());
  for (std::size_t k = 0; k < chunks(); ++k) {
    const std::size_t u = (begin_ + k * unit_) / unit_;
    own_.emplace_back(own.unit(u).begin(), own.unit(u).end());
    if (sum_.add_encoded(config_.self, own_.back(), own.digest(u), n)) finish_chunk(k);
  }
}

std::size_t SegmentJudge::chunk_size(std::size_t k) const {
  return std::min(unit_, end_ - begin_ - k * unit_);
}

std::size_t SegmentJudge::index_of(const PeerKey& member) const {
  return static_cast<std::size_t>(
      std::find(config_.members.begin(), config_.members.end(), member) - config_.members.begin());
}

void SegmentJudge::on_chunk(const PeerKey& from, const JudgeChunk& c) {
  const std::size_t m = index_of(from);
  if (decided_ || m >= config_.members.size() || m == config_.self || c.round != call_.round ||
      c.attempt != call_.attempt || c.segment != call_.segment || bad_[m])
    return;
  if (c.chunk != sum_.next_from(m) || c.chunk >= chunks()) {
    bad_[m] = true;
  } else {
    add(m, c.chunk, c.bytes);
  }
  if (everything_in()) decide();
}

// Member m's chunk k, decoded and checked as the owner checks a contribution (one update's bound).
void SegmentJudge::add(std::size_t m, std::size_t k, std::span<const std::byte> bytes) {
  std::shared_ptr<std::vector<float>> values = sum_.buffer(chunk_size(k));
  try {
    config_.codec->decode(bytes, *values);
  } catch (const Error&) {
    bad_[m] = true;
    return;
  }
  if (out_of_bounds(*values, 1, config_.norm_limit, config_.median_norm)) {
    bad_[m] = true;
    return;
  }
  if (sum_.add(m, bytes, std::move(values), config_.members.size())) finish_chunk(k);
}

// The chunk's mean and its one quantization, with the salt and seed the owner uses
// (direct_allreduce.cpp: finish_chunk, AllReduce::encode).
void SegmentJudge::finish_chunk(std::size_t k) {
  scratch_.resize(chunk_size(k));
  sum_.mean(k, scratch_);
  const std::uint64_t salt = begin_ + k * unit_ + config_.members.size() * values_;
  try {
    result_.add_bytes(config_.codec->encode(
        scratch_, compress::EncodeOptions{.seed = mix64(config_.seed ^ salt), .shape = {}}));
  } catch (const Error&) {
    // A mean that cannot be encoded (finite contributions whose sum is not): an owner or checker
    // fails there and signs nothing, so the two that signed both lied (decide()).
    return;
  }
  ++chunks_done_;
}

void SegmentJudge::on_inputs(const PeerKey& from, const JudgeInputs& in) {
  const std::size_t n = config_.members.size();
  const std::size_t m = index_of(from);
  const bool owner = m == call_.segment, checker = m == checker_of(call_.segment, n);
  std::optional<std::vector<Statement>>& slot = owner ? owner_list_ : checker_list_;
  if (decided_ || (!owner && !checker) || slot || in.round != call_.round ||
      in.attempt != call_.attempt || in.segment != call_.segment || in.inputs.size() != n)
    return;
  for (std::size_t i = 0; i < n; ++i) {
    const Statement& s = in.inputs[i];
    if (s.signer != config_.members[i] || s.round != call_.round || s.attempt != call_.attempt ||
        s.kind != StatementKind::contribution || s.segment != call_.segment ||
        !verify_statement(config_.run_id, s))
      return;
  }
  slot = in.inputs;
  if (everything_in()) decide();
}

void SegmentJudge::close() {
  closed_ = true;
  decide();
}

std::optional<Verdict> SegmentJudge::poll_verdict() {
  return std::exchange(verdict_, std::nullopt);
}

bool SegmentJudge::everything_in() const {
  if (!owner_list_ || !checker_list_) return false;
  for (std::size_t m = 0; m < config_.members.size(); ++m)
    if (!bad_[m] && sum_.next_from(m) < chunks()) return false;
  return true;
}

const Statement* SegmentJudge::reference(std::size_t m) const {
  if (owner_list_) return &(*owner_list_)[m];
  if (checker_list_) return &(*checker_list_)[m];
  return nullptr;
}

void SegmentJudge::decide() {
  if (decided_) return;
  decided_ = true;
  const std::size_t n = config_.members.size();
  Verdict v;
  for (std::size_t m = 0; m < n && owner_list_ && checker_list_; ++m)
    if ((*owner_list_)[m].digest != (*checker_list_)[m].digest) {
      v.equivocation = MisconductProof{.first = (*owner_list_)[m], .second = (*checker_list_)[m]};
      break;
    }
  if (!owner_list_ && !checker_list_) {
    v.missing = {config_.members[call_.segment], config_.members[checker_of(call_.segment, n)]};
  } else {
    for (std::size_t m = 0; m < n; ++m)
      if (bad_[m] || sum_.next_from(m) < chunks() || sum_.digest_of(m) != reference(m)->digest)
        v.missing.push_back(config_.members[m]);
  }
  if (v.missing.empty() && !v.equivocation && chunks_done_ != chunks())
    v.missing = {config_.members[call_.segment], config_.members[checker_of(call_.segment, n)]};
  const bool decided = v.decided();
  v.judged =
      sign_statement(*config_.signer, config_.run_id, call_.round, call_.attempt,
                     StatementKind::verdict, call_.segment, decided ? result_.finish() : Digest{});
  verdict_ = std::move(v);
}

}  // namespace loco::proto
