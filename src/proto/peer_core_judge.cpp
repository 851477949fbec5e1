// A peer's part in disputes decided by evidence (segment_judge.hpp, docs/PROTOCOL.md "Disputes
// decided by evidence"). The tracker's judge_call reaches every member of the disputed attempt
// before that attempt's abort (one tracker link, in order), while each still holds the round's
// encoded update: a member sends the judge its chunks of the segment, the owner and the checker
// also the contribution statements they summed; the judge recomputes the segment and sends its
// verdict to the tracker once everything is in, or at the grace's end.
#include <fmt/format.h>

#include "loco/core/error.hpp"
#include "loco/proto/direct_allreduce.hpp"
#include "loco/proto/peer_core.hpp"

namespace loco::proto {
namespace {

// At most this many disputes judged here at once: a judge call beyond it is not answered (the
// tracker counts that dispute).
constexpr std::size_t kMaxJudgings = 8;

}  // namespace

void PeerCore::on_judge_call(TimePoint now, const JudgeCall& call) {
  const auto attempt = attempt_configs_.find(call.attempt);
  if (call.round != ready_round_ || attempt == attempt_configs_.end() || !encoded_ ||
      call.segment >= attempt->second.members.size())
    return;  // not an attempt of this member's (or its round is over here)
  const AllReduceConfig& config = attempt->second;
  const std::size_t n = config.members.size();
  const auto id = std::make_tuple(call.round, call.attempt, call.segment);
  const bool party = config.self == call.segment || config.self == checker_of(call.segment, n);
  if (call.judge != config_.self || party) {
    contribute_to_judge(call, config);
    return;
  }
  if (judging_.contains(id) || judging_.size() >= kMaxJudgings) return;
  Judging& j = judging_[id];
  j.judge = std::make_unique<SegmentJudge>(config, *encoded_, call);
  j.deadline = now + std::chrono::milliseconds(call.grace_ms);
  note(fmt::format("round {} attempt {}: judging the dispute on segment {} between {} and {}",
                   call.round, call.attempt, call.segment,
                   secure::short_id(call.owner_result.signer),
                   secure::short_id(call.checker_result.signer)),
       false);
  for (const EarlyMessages::Message& m : judge_early_.take({call.round, call.attempt}))
    on_judge_message(m.from, m.type, m.body);
  pump_judges();
}

// This member's chunks of the segment, the units of its encoded update the owner and the checker
// were sent (its contribution statement's digest covers them), and its list if it is a party.
void PeerCore::contribute_to_judge(const JudgeCall& call, const AllReduceConfig& config) {
  const std::size_t n = config.members.size();
  const std::size_t unit = encoded_->unit_values();
  const std::size_t begin = segment_begin(encoded_->values(), n, call.segment, unit);
  const std::size_t end = segment_begin(encoded_->values(), n, call.segment + 1, unit);
  for (std::size_t at = begin, k = 0; at < end; at += unit, ++k) {
    const std::span<const std::byte> bytes = encoded_->unit(at / unit);
    send(call.judge, MessageType::judge_chunk,
         encode(JudgeChunk{.round = call.round,
                           .attempt = call.attempt,
                           .segment = call.segment,
                           .chunk = static_cast<std::uint32_t>(k),
                           .bytes = {bytes.begin(), bytes.end()}}));
  }
  if (auto inputs = inputs_for(call.attempt, call.segment))
    send(call.judge, MessageType::judge_inputs,
         encode(JudgeInputs{.round = call.round,
                            .attempt = call.attempt,
                            .segment = call.segment,
                            .inputs = std::move(*inputs)}));
}

std::optional<std::vector<Statement>> PeerCore::inputs_for(std::uint32_t attempt,
                                                           std::size_t segment) {
  if (all_reduce_ && attempt == attempt_ && encodes_once())
    if (auto live = static_cast<const DirectAllReduce&>(*all_reduce_).inputs_of(segment))
      return live;
  const auto kept = kept_inputs_.find({attempt, segment});
  if (kept == kept_inputs_.end()) return std::nullopt;
  return kept->second;
}

void PeerCore::keep_inputs() {
  if (!all_reduce_ || !encodes_once() || !attempt_config_ || !attempt_config_->check_owners) return;
  const auto& direct = static_cast<const DirectAllReduce&>(*all_reduce_);
  const std::size_t n = attempt_config_->members.size();
  const std::size_t self = attempt_config_->self;
  for (const std::size_t segment : {self, (self + n - 1) % n})
    if (auto inputs = direct.inputs_of(segment))
      kept_inputs_[{attempt_, segment}] = std::move(*inputs);
}

void PeerCore::on_judge_message(const PeerKey& from, MessageType type,
                                std::span<const std::byte> body) {
  std::optional<JudgeChunk> chunk;
  std::optional<JudgeInputs> inputs;
  if (type == MessageType::judge_chunk)
    chunk = decode_judge_chunk(body);
  else
    inputs = decode_judge_inputs(body);
  const std::uint64_t round = chunk ? chunk->round : inputs->round;
  const std::uint32_t attempt = chunk ? chunk->attempt : inputs->attempt;
  const std::uint32_t segment = chunk ? chunk->segment : inputs->segment;
  const auto j = judging_.find(std::make_tuple(round, attempt, segment));
  if (j == judging_.end()) {
    // Its call may not be here yet (another link): kept, for an attempt of this round this member
    // took part in (the only ones it can be called to judge).
    if (round == ready_round_ && ready_round_ != 0 && attempt_configs_.contains(attempt))
      judge_early_.keep({round, attempt}, from, type, body);
    return;
  }
  if (chunk)
    j->second.judge->on_chunk(from, *chunk);
  else
    j->second.judge->on_inputs(from, *inputs);
  pump_judges();
}

void PeerCore::pump_judges() {
  for (auto it = judging_.begin(); it != judging_.end();) {
    std::optional<Verdict> verdict = it->second.judge->poll_verdict();
    if (!verdict) {
      ++it;
      continue;
    }
    const JudgeCall& call = it->second.judge->call();
    note(fmt::format(
             "round {} attempt {}: judged segment {}: {}", call.round, call.attempt, call.segment,
             verdict->decided()
                 ? (verdict->judged.digest == call.owner_result.digest
                        ? "the owner's mean is the right one"
                    : verdict->judged.digest == call.checker_result.digest
                        ? "the checker's mean is the right one"
                        : "neither signed the right mean")
                 : fmt::format("undecided ({} member(s) did not send what they owed{})",
                               verdict->missing.size(),
                               verdict->equivocation ? ", and one signed two digests" : "")),
         false);
    client_.verdict(*verdict);
    it = judging_.erase(it);
  }
}

void PeerCore::judge_timer(TimePoint now) {
  for (auto& [id, j] : judging_)
    if (j.deadline <= now) j.judge->close();
  pump_judges();
}

}  // namespace loco::proto
