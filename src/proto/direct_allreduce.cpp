#include "loco/proto/direct_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {

namespace {

// The collective's config with the direct exchange's chunk for `values` values.
AllReduceConfig with_direct_chunks(AllReduceConfig config, std::size_t values) {
  config.chunk_values = direct_chunk_values(values, config.chunk_values);
  return config;
}

}  // namespace

DirectAllReduce::DirectAllReduce(AllReduceConfig config, const EncodedUpdate& update)
    : AllReduce(with_direct_chunks(std::move(config), update.values()), update.values(),
                Segments::whole_chunks),
      update_(&update),
      mean_((update.values() + config_.chunk_values - 1) / config_.chunk_values) {
  LOCO_ASSERT(!config_.check_owners || config_.signer != nullptr,
              "checked owners sign their statements");
  LOCO_ASSERT(update_->values() == values() && update_->unit_values() == config_.chunk_values,
              "the encoded update is the result's size, in units of the collective's chunk");
}

DirectAllReduce::DirectAllReduce(AllReduceConfig config, std::span<const float> update,
                                 std::span<float> result)
    : AllReduce(with_direct_chunks(std::move(config), result.size()), result.size(),
                Segments::whole_chunks),
      to_encode_(update),
      result_(result) {
  LOCO_ASSERT(!config_.check_owners || config_.signer != nullptr,
              "checked owners sign their statements");
  LOCO_ASSERT(update.size() == values(), "the mean has the update's size");
}

// Where the mean's chunk goes once its owner's bytes are in (the owner's own, or checked received
// ones): kept as they are, or decoded into the fp32 result (the values are the same either way).
void DirectAllReduce::keep_mean(const Chunk& c, std::span<const std::byte> bytes) {
  if (result_.empty())
    mean_[c.begin / config_.chunk_values].assign(bytes.begin(), bytes.end());
  else
    config_.codec->decode(bytes, result_.subspan(c.begin, c.size));
}

std::vector<std::vector<std::byte>> DirectAllReduce::take_mean() {
  LOCO_ASSERT(done() && result_.empty(), "the encoded mean of a collective not done");
  return std::move(mean_);
}

std::optional<std::vector<Statement>> DirectAllReduce::inputs_of(std::size_t segment) const {
  if (!config_.check_owners || member_count() < 2) return std::nullopt;
  const std::vector<std::optional<Statement>>* kept = segment == config_.self        ? &own_inputs_
                                                      : segment == checked_segment() ? &inputs_
                                                                                     : nullptr;
  if (kept == nullptr || kept->size() != member_count()) return std::nullopt;
  std::vector<Statement> out;
  for (const auto& s : *kept) {
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

std::size_t DirectAllReduce::unit_index(std::size_t segment, std::size_t k) const {
  return chunk(segment, k).begin / config_.chunk_values;
}

std::span<const std::byte> DirectAllReduce::unit_of(std::size_t segment, std::size_t k) const {
  return update_->unit(unit_index(segment, k));
}

const secure::Signature& DirectAllReduce::signature_of(std::size_t segment, std::size_t k) const {
  return update_->signature(unit_index(segment, k));
}

std::size_t DirectAllReduce::checked_segment() const {
  return (config_.self + member_count() - 1) % member_count();
}

std::size_t DirectAllReduce::index_of(const PeerKey& member) const {
  return static_cast<std::size_t>(
      std::find(config_.members.begin(), config_.members.end(), member) - config_.members.begin());
}

SegmentSum& DirectAllReduce::sum_of(std::size_t segment) {
  return segment == config_.self ? *owned_ : *checked_;
}

bool DirectAllReduce::done() const {
  return !failure() && owned_chunks_done_ == chunks_in(config_.self) &&
         gathered_ == expected_gathers_ && (!config_.check_owners || settled_ == member_count());
}

bool DirectAllReduce::needs_link_to(const PeerKey& peer) const {
  const std::size_t m = index_of(peer);
  if (m >= member_count() || m == config_.self || !owned_) return false;
  if (config_.check_owners) return !done();  // its statements are awaited to the end
  return owned_->next_from(m) < chunks_in(config_.self) || next_gather_[m] < chunks_in(m);
}

void DirectAllReduce::start() {
  const std::size_t n = member_count();
  const std::size_t self = config_.self;
  if (update_ == nullptr) {  // built from fp32 values: they are read now, before any is written
    own_encoding_.emplace(*config_.codec, to_encode_, config_.chunk_values, config_.seed,
                          config_.members[self]);
    if (config_.signer != nullptr)
      own_encoding_->sign(*config_.signer, config_.run_id, config_.round);
    update_ = &*own_encoding_;
  }
  if (update_->failure()) {
    fail("this member's own values: " + *update_->failure(), {});
    return;
  }
  if (n == 1) {  // the mean of one contribution: its encoded update, decoded
    for (std::size_t k = 0; k < chunks_in(self); ++k) keep_mean(chunk(self, k), unit_of(self, k));
    owned_chunks_done_ = chunks_in(self);
    settled_ = 1;
    return;
  }
  const bool checked = config_.check_owners;
  owned_.emplace(n, chunks_in(self), config_.trim, config_.weights, config_.buffers, config_.codec);
  next_gather_.assign(n, 0);
  for (std::size_t g = 0; g < n; ++g)
    if (g != self && !(checked && g == checked_segment())) expected_gathers_ += chunks_in(g);
  if (checked) {
    checked_.emplace(n, chunks_in(checked_segment()), config_.trim, config_.weights,
                     config_.buffers, config_.codec);
    sent_.resize(n);
    inputs_.resize(n);
    owners_.resize(n);
    own_inputs_.resize(n);
    checks_.resize(n);
    // A segment of no values (more members than values) has nothing to gather: its digest is
    // that of nothing, and its owner signs that at once.
    for (std::size_t g = 0; g < n; ++g)
      if (g != self && chunks_in(g) == 0) checks_[g].received_digest = SegmentDigest().finish();
  }
  send_contributions();
  if (checked && chunks_in(self) == 0) sign_owned();
}

// 1. Reduce-scatter: this member's part of every other member's segment, chunk by chunk, the
// owners in turn; with checked owners, to each segment's checker too, its own segment included.
// Its own contribution to the segments it reduces is its encoded bytes too, as the others decode
// them (so that owner and checker sum the same), read where the encoded update keeps them.
void DirectAllReduce::send_contributions() {
  const std::size_t n = member_count();
  const std::size_t self = config_.self;
  const bool checked = config_.check_owners;
  std::size_t most_chunks = 0;
  for (std::size_t g = 0; g < n; ++g) most_chunks = std::max(most_chunks, chunks_in(g));
  for (std::size_t k = 0; k < most_chunks && !failure(); ++k) {
    for (std::size_t d = 1; d <= n && !failure(); ++d) {
      const std::size_t g = (self + d) % n;
      if (k >= chunks_in(g)) continue;
      const std::span<const std::byte> bytes = unit_of(g, k);
      const Digest& digest = update_->digest(unit_index(g, k));
      const secure::Signature& signature = signature_of(g, k);
      if (g != self) send(config_.members[g], 0, 0, k, bytes, signature);
      const std::size_t checker = checker_of(g, n);
      if (checked) {
        sent_[g].add(digest);
        if (checker != self) send(config_.members[checker], 2, 0, k, bytes, signature);
      }
      if (g == self || (checked && checker == self))
        if (sum_of(g).add_encoded(self, bytes, digest, n)) finish_chunk(g, k);
    }
  }
  if (!checked || failure()) return;
  for (std::size_t g = 0; g < n && !failure(); ++g) {
    const Statement s = sign(StatementKind::contribution, g, sent_[g].finish());
    const std::size_t checker = checker_of(g, n);
    if (g != self) send_statement(config_.members[g], s);
    if (checker != self) send_statement(config_.members[checker], s);
    if (g == self || checker == self) contribution_signed(g, self, s);
  }
}

void DirectAllReduce::on_message(const PeerKey& from, std::span<const std::byte> body) {
  if (failure() || done()) return;
  const std::size_t sender = index_of(from);
  if (sender >= member_count() || sender == config_.self) {
    fail(fmt::format("a chunk came from {}, not a member of the group", secure::short_id(from)),
         from);
    return;
  }
  try {
    std::span<const std::byte> payload;
    const ChunkHeader h = read_chunk(body, payload);
    const std::uint8_t phases = config_.check_owners ? 4 : 2;
    if (h.phase >= phases || (h.phase != 3 && h.step != 0))
      throw Error(ErrorCategory::protocol,
                  fmt::format("phase {} step {} does not exist in this direct all-reduce", h.phase,
                              h.step));
    switch (h.phase) {
      case 0: on_reduce(sender, config_.self, h.chunk, h, payload); break;
      case 1: on_gather(sender, h.chunk, h, payload); break;
      case 2: on_reduce(sender, checked_segment(), h.chunk, h, payload); break;
      default: on_statement(sender, h.step, payload);
    }
  } catch (const Error& e) {
    fail(e.message(), from);
  }
}

void DirectAllReduce::on_reduce(std::size_t from, std::size_t segment, std::size_t k,
                                const ChunkHeader& h, std::span<const std::byte> encoded) {
  SegmentSum& sum = sum_of(segment);
  if (k != sum.next_from(from) || k >= chunks_in(segment))
    throw Error(ErrorCategory::protocol,
                fmt::format("reduce-scatter chunk {} came where chunk {} of {} was due (segment "
                            "{})",
                            k, sum.next_from(from), chunks_in(segment), segment));
  // Decoded straight into the buffer the sum keeps until the chunk is summed.
  std::shared_ptr<std::vector<float>> values = sum.buffer(chunk(segment, k).size);
  if (!accept_chunk(from, segment, k, StatementKind::update_unit, h.signature, encoded, *values))
    return;
  if (sum.add(from, encoded, std::move(values), member_count())) finish_chunk(segment, k);
}

// 2. The mean of chunk k of a segment this member reduces, and its one quantization. The owner
// keeps the decoded bytes as its result and sends them to everyone; the checker only hashes them.
void DirectAllReduce::finish_chunk(std::size_t segment, std::size_t k) {
  const std::size_t n = member_count();
  const Chunk c = chunk(segment, k);
  const std::uint64_t salt = c.begin + n * values();
  if (segment != config_.self) {
    result_chunk_.resize(c.size);
    checked_->mean(k, result_chunk_);
    const std::vector<std::byte> bytes = encode(result_chunk_, salt);
    if (failure()) return;
    checked_result_.add_bytes(bytes);
    keep_mean(c, bytes);  // the owner's bytes, if their statements agree (settle)
    if (++checked_chunks_done_ == chunks_in(segment)) sign_result(segment);
    return;
  }
  result_chunk_.resize(c.size);
  owned_->mean(k, result_chunk_);
  const std::vector<std::byte> bytes = encode(result_chunk_, salt);
  if (failure()) return;
  keep_mean(c, bytes);
  // What the chunk's signature signs and the owner's result statement is built from.
  const Digest digest = config_.signer != nullptr || config_.check_owners
                            ? blake2b(std::span<const std::byte>(bytes))
                            : Digest{};
  const secure::Signature signature =
      config_.signer == nullptr
          ? secure::Signature{}
          : sign_statement(*config_.signer, config_.run_id, config_.round, config_.attempt,
                           StatementKind::mean_unit,
                           static_cast<std::uint32_t>(unit_index(segment, k)), digest)
                .signature;
  const std::size_t checker = config_.check_owners ? checker_of(segment, n) : config_.self;
  for (std::size_t m = 0; m < n; ++m)
    if (m != config_.self && m != checker) send(config_.members[m], 1, 0, k, bytes, signature);
  ++owned_chunks_done_;
  if (!config_.check_owners) return;
  owned_result_.add(digest);
  if (owned_chunks_done_ == chunks_in(segment)) sign_owned();
}

// The owner signs the digest of the mean it sent, once all of it is out.
void DirectAllReduce::sign_owned() {
  const std::size_t self = config_.self;
  const Statement s = sign(StatementKind::result, self, owned_result_.finish());
  for (std::size_t m = 0; m < member_count(); ++m)
    if (m != self) send_statement(config_.members[m], s);
  SegmentCheck& check = checks_[self];
  check.owner = s;
  check.received_digest = s.digest;
  settle(self);
}

// 3. All-gather: member `from`'s mean of its segment, as it encoded it.
void DirectAllReduce::on_gather(std::size_t from, std::size_t k, const ChunkHeader& h,
                                std::span<const std::byte> encoded) {
  if (config_.check_owners && from == checked_segment())
    throw Error(ErrorCategory::protocol,
                "an all-gather chunk from the owner of the segment this member checks (the "
                "checker keeps its own mean of it)");
  if (k != next_gather_[from] || k >= chunks_in(from))
    throw Error(ErrorCategory::protocol,
                fmt::format("all-gather chunk {} came where chunk {} of {} was due", k,
                            next_gather_[from], chunks_in(from)));
  ++next_gather_[from];
  const Chunk c = chunk(from, k);
  // An fp32 result takes the values as they are checked, decoded once; else they are checked in
  // scratch and the bytes are kept.
  scratch_.resize(result_.empty() ? c.size : 0);
  const std::span<float> out =
      result_.empty() ? std::span<float>(scratch_) : result_.subspan(c.begin, c.size);
  if (!accept_chunk(from, from, k, StatementKind::mean_unit, h.signature, encoded, out)) return;
  if (result_.empty()) keep_mean(c, encoded);
  ++gathered_;
  if (!config_.check_owners) return;
  SegmentCheck& check = checks_[from];
  check.received.add_bytes(encoded);
  if (next_gather_[from] == chunks_in(from)) {
    check.received_digest = check.received.finish();
    settle(from);
  }
}

bool DirectAllReduce::accept_chunk(std::size_t from, std::size_t segment, std::size_t k,
                                   StatementKind kind, const secure::Signature& signature,
                                   std::span<const std::byte> encoded, std::span<float> out) {
  const PeerKey& sender = config_.members[from];
  try {
    if (decode_checked(encoded, out, 1, sender)) return true;
  } catch (const Error& e) {
    fail(e.message(), sender);
  }
  Evidence evidence{.round = config_.round,
                    .attempt = config_.attempt,
                    .accused = sender,
                    .kind = kind,
                    .unit = static_cast<std::uint32_t>(unit_index(segment, k)),
                    .signature = signature,
                    .bytes = {encoded.begin(), encoded.end()}};
  if (what_evidence_shows(evidence, evidence_context(config_, values())))
    attach_evidence(std::move(evidence));
  return false;
}

// --- checked owners ---

Statement DirectAllReduce::sign(StatementKind kind, std::size_t segment,
                                const Digest& digest) const {
  return sign_statement(*config_.signer, config_.run_id, config_.round, config_.attempt, kind,
                        static_cast<std::uint32_t>(segment), digest);
}

// Statement messages (phase 3), by `what`: 0 a contribution statement, 1 the owner's list of the
// N contribution statements it summed (to its checker), 2 a result statement.
void DirectAllReduce::send_statement(const PeerKey& to, const Statement& s) {
  ByteWriter w;
  write_statement(w, s);
  send(to, 3, s.kind == StatementKind::contribution ? 0 : 2, 0, w.finish());
}

void DirectAllReduce::on_statement(std::size_t from, std::uint32_t what,
                                   std::span<const std::byte> payload) {
  const std::size_t n = member_count();
  ByteReader r(payload, "a checked-owner statement");
  if (what == 1) {
    const std::size_t cs = checked_segment();
    if (from != cs || owner_list_in_)
      throw Error(ErrorCategory::protocol, "a list of inputs from a member that is not owed one");
    if (r.count(n, kStatementBytes) != n) r.fail("a list of inputs of another group's size");
    for (std::size_t m = 0; m < n; ++m) owners_[m] = read_statement(r);
    r.expect_end();
    owner_list_in_ = true;
    compare_inputs();
    return;
  }
  if (what != 0 && what != 2)
    throw Error(ErrorCategory::protocol, fmt::format("statement message {} does not exist", what));
  const Statement s = read_statement(r);
  r.expect_end();
  const StatementKind kind = what == 0 ? StatementKind::contribution : StatementKind::result;
  if (s.signer != config_.members[from] || s.round != config_.round ||
      s.attempt != config_.attempt || s.kind != kind || s.segment >= n)
    throw Error(ErrorCategory::protocol, "a statement not of its sender, round or kind");
  if (!verify_statement(config_.run_id, s))
    throw Error(ErrorCategory::protocol, "a statement whose signature does not verify");
  const std::size_t g = s.segment;
  if (kind == StatementKind::contribution) {
    if (g != config_.self && g != checked_segment())
      throw Error(ErrorCategory::protocol,
                  fmt::format("a contribution statement for segment {}, not reduced here", g));
    contribution_signed(g, from, s);
    return;
  }
  const bool owner = from == g;
  if (!owner && from != checker_of(g, n))
    throw Error(
        ErrorCategory::protocol,
        fmt::format("a result statement for segment {}, which it neither owns nor checks", g));
  SegmentCheck& check = checks_[g];
  std::optional<Statement>& slot = owner ? check.owner : check.checker;
  if (slot) throw Error(ErrorCategory::protocol, "a second result statement for one segment");
  slot = s;
  settle(g);
}

// A contributor's statement for a segment reduced here: it must be the digest of what it sent.
void DirectAllReduce::contribution_signed(std::size_t segment, std::size_t from,
                                          const Statement& s) {
  SegmentSum& sum = sum_of(segment);
  std::vector<std::optional<Statement>>& kept = segment == config_.self ? own_inputs_ : inputs_;
  if (kept[from])
    throw Error(ErrorCategory::protocol, "a second contribution statement for one segment");
  if (sum.next_from(from) != chunks_in(segment))
    throw Error(
        ErrorCategory::protocol,
        fmt::format("it signed its contribution to segment {} before sending all of it", segment));
  if (s.digest != sum.digest_of(from))
    throw Error(
        ErrorCategory::protocol,
        fmt::format("its signed digest of segment {} is not that of the bytes it sent", segment));
  kept[from] = s;
  if (segment != config_.self) {
    compare_inputs();
    return;
  }
  if (!std::all_of(kept.begin(), kept.end(), [](const auto& k) { return k.has_value(); })) return;
  ByteWriter w;
  w.u32(static_cast<std::uint32_t>(member_count()));
  for (const auto& k : kept) write_statement(w, *k);
  send(config_.members[checker_of(segment, member_count())], 3, 1, 0, w.finish());
}

// The checker compares the owner's inputs with its own: one contributor's two statements that
// differ prove it equivocated; a statement that is not its signer's proves the owner forged it.
void DirectAllReduce::compare_inputs() {
  if (!owner_list_in_ || inputs_agree_ ||
      !std::all_of(inputs_.begin(), inputs_.end(), [](const auto& k) { return k.has_value(); }))
    return;
  const std::size_t cs = checked_segment();
  for (std::size_t m = 0; m < member_count(); ++m) {
    const Statement& mine = *inputs_[m];
    const Statement& owners = *owners_[m];
    const bool same_claim = owners.signer == mine.signer && owners.round == mine.round &&
                            owners.attempt == mine.attempt && owners.kind == mine.kind &&
                            owners.segment == mine.segment;
    if (same_claim && owners.digest == mine.digest) continue;
    if (!same_claim || !verify_statement(config_.run_id, owners)) {
      fail(fmt::format("the owner of segment {} listed an input {} did not sign", cs,
                       secure::short_id(config_.members[m])),
           config_.members[cs]);
      return;
    }
    fail_proven(
        fmt::format("{} signed two digests of its contribution to segment {}: it sent the owner "
                    "and the checker different bytes",
                    secure::short_id(config_.members[m]), cs),
        MisconductProof{.first = mine, .second = owners});
    return;
  }
  inputs_agree_ = true;
  sign_result(cs);
}

// The checker signs its mean once it has all of it and knows it summed the owner's inputs.
void DirectAllReduce::sign_result(std::size_t segment) {
  if (!inputs_agree_ || checked_signed_ || checked_chunks_done_ < chunks_in(segment)) return;
  checked_signed_ = true;
  const Statement s = sign(StatementKind::result, segment, checked_result_.finish());
  for (std::size_t m = 0; m < member_count(); ++m)
    if (m != config_.self) send_statement(config_.members[m], s);
  checks_[segment].checker = s;
  checks_[segment].received_digest = s.digest;  // what it keeps of the segment: its own mean
  settle(segment);
}

// Segment g is accepted when the owner's bytes, its statement and the checker's agree.
void DirectAllReduce::settle(std::size_t segment) {
  SegmentCheck& check = checks_[segment];
  if (check.settled || !check.owner || !check.checker || !check.received_digest) return;
  if (check.owner->digest != check.checker->digest) {
    fail_proven(fmt::format("the owner {} and the checker {} of segment {} signed different means",
                            secure::short_id(check.owner->signer),
                            secure::short_id(check.checker->signer), segment),
                MisconductProof{.first = *check.owner, .second = *check.checker});
    return;
  }
  if (*check.received_digest != check.owner->digest) {
    fail(fmt::format("the mean of segment {} it sent is not the one it signed", segment),
         config_.members[segment]);
    return;
  }
  check.settled = true;
  ++settled_;
}

}  // namespace loco::proto
