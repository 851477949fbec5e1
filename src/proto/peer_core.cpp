#include "loco/proto/peer_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "loco/core/error.hpp"
#include "loco/proto/direct_allreduce.hpp"
#include "loco/proto/link_direction.hpp"
#include "loco/proto/state_relay.hpp"
#include "loco/proto/token_weights.hpp"

namespace loco::proto {
namespace {

// Messages of a collective not started here yet wait for it, up to this many.
constexpr std::size_t kMaxEarlyMessages = 1024;

// After a failed fetch (every donor gone or wrong) the peer asks the tracker for new donors after
// this long, doubling up to the maximum: donors that just died are still in the view a while.
constexpr Backoff kFetchBackoff{std::chrono::milliseconds(250), std::chrono::seconds(8)};

}  // namespace

PeerCore::CollectiveId PeerCore::collective_id(MessageType type, std::span<const std::byte> body) {
  if (type == MessageType::all_gather_part) {
    const auto [round, attempt] = all_gather_part_id(body);
    return {round, attempt, true};
  }
  std::span<const std::byte> payload;
  const ChunkHeader h = decode_chunk(body, payload);
  return {h.round, h.attempt, h.phase != 0};
}

PeerCore::PeerCore(PeerCoreConfig config, TrackerClientConfig client)
    : config_(std::move(config)),
      tracker_key_(client.tracker_key),
      run_id_(client.run_id),
      client_([&] {
        client.join.relay_pairs = config_.relay.max_pairs;  // what it relays, if reachable
        return std::move(client);
      }()),
      codec_(compress::make_codec(config_.codec)),
      early_(kMaxEarlyMessages),
      fetch_backoff_(kFetchBackoff),
      relay_(config_.relay) {
  if (!config_.gossip_group_of)
    config_.gossip_group_of = [](const GossipRound& r, std::span<const PeerKey> roster,
                                 const PeerKey& self) { return gossip_group_of(r, roster, self); };
}

// --- the tracker's events ---

void PeerCore::on_client_event(TimePoint now, const ClientEvent& e) {
  using Kind = ClientEvent::Kind;
  switch (e.kind) {
    case Kind::joined:
      emit(PeerEvent::Kind::joined).reply = e.reply;
      // Joined again mid-round: the tracker forgot the ready. Unless the run is past that round
      // (committed from this peer's tentative state, and the commit follows; or from another
      // state, and a resync follows): the ready is stale.
      if (ready_round_ != 0 && !gossip() && e.reply.committed_round < ready_round_)
        client_.ready(ready_);
      return;
    case Kind::refused: {
      PeerEvent& out = emit(PeerEvent::Kind::refused);
      out.text = e.text;
      out.cause = e.cause;
      return;
    }
    case Kind::group:
      if (!gossip() && e.group.round == ready_round_) start_collective(e.group);
      return;
    case Kind::commit: {
      PeerEvent& out = emit(PeerEvent::Kind::committed);
      out.round = e.commit.round;
      out.attempt = e.commit.attempt;
      out.hash = e.commit.state_hash;
      out.mine = e.commit.round == ready_round_ && reported_ != Digest{} &&
                 e.commit.state_hash == reported_;
      end_round();
      return;
    }
    case Kind::abort_round: {
      if (e.abort.retry) {
        end_collective();
        set_reported({});  // that attempt's state will never be committed
      } else {
        end_round();
        relay_.clear();  // the round is over for every member
      }
      PeerEvent& out = emit(PeerEvent::Kind::aborted);
      out.text = e.abort.reason;
      out.round = e.abort.round;
      out.attempt = e.abort.attempt;
      out.retry = e.abort.retry;
      return;
    }
    case Kind::resync: on_resync(now, e.resync); return;
    case Kind::judge_call: on_judge_call(now, e.judge_call); return;
    case Kind::run_ended: {
      PeerEvent& out = emit(PeerEvent::Kind::run_ended);
      out.round = e.run_ended.round;
      out.hash = e.run_ended.state_hash;
      out.kept = e.run_ended.kept;
      return;
    }
    case Kind::state_relay:  // the tracker's custody: it pulls this state, or serves its copy
      if (is_state_request(e.relay_type)) {
        server_.on_message(tracker_key_, e.relay_type, e.relay_body);
        pump_server();
      } else if (fetcher_) {
        fetcher_->on_message(now, tracker_key_, e.relay_type, e.relay_body);
        pump_fetch(now);
      }
      return;
    case Kind::view:
      note_own_reachability();
      if (gossip()) gossip_view_changed();
      return;
    case Kind::tracker_lost:
    case Kind::tracker_error: return;  // the client keeps the view; the transport reconnects
  }
}

void PeerCore::on_resync(TimePoint now, const Resync& resync) {
  // The tracker repeats a resync (to a ready, a state report, each commit); a second fetch of the
  // same state would take the first one's answers for its own and blame the donors. A resync to a
  // newer round (the run committed one meanwhile) does not stop a running fetch either: where
  // rounds are shorter than a fetch (DeMo's), starting over at each commit never ended one. This
  // one ends, the state report that follows the fetched state gets the newest round's resync, and
  // a fetch whose donors moved on (they refuse an old round) fails and asks the tracker again.
  if (fetcher_ && (fetching_.round < resync.round ||
                   (fetching_.round == resync.round && fetching_.state_hash == resync.state_hash)))
    return;
  end_round();
  if (serving_ && served_round_ == resync.round && served_hash_ == resync.state_hash) {
    // The state this peer holds. Its report may just not have reached the tracker yet (a
    // repeated resync): say it again. Or the application waits for a fetch of a state no one
    // held and the run went back to this one: it takes it from itself.
    fetcher_.reset();
    ask_again_ = kNever;
    PeerEvent& out = emit(std::exchange(fetch_pending_, false) ? PeerEvent::Kind::fetched
                                                               : PeerEvent::Kind::kept);
    out.round = resync.round;
    out.hash = resync.state_hash;
    out.told = now;
    if (out.kind == PeerEvent::Kind::kept) client_.state_report();
    return;
  }
  fetch_pending_ = true;
  PeerEvent& out = emit(PeerEvent::Kind::must_fetch);
  out.round = resync.round;
  out.hash = resync.state_hash;
  start_fetch(now, resync);
}

// --- the round's collective ---

void PeerCore::ready(const Ready& ready, Update delta) {
  end_round();  // what is left of a round before (nothing, when the application kept the order)
  update_ = std::move(delta);
  gather_ = false;
  announce_ready(ready);
}

void PeerCore::ready(const Ready& ready, std::span<const float> delta) {
  end_round();
  if (encodes_once()) {
    borrowed_ = delta;
  } else {  // the ring reads Δ in fp32 at every attempt: a copy of its own (the class comment)
    update_ = update_pool_.take(delta.size());
    std::copy(delta.begin(), delta.end(), update_->begin());
  }
  gather_ = false;
  announce_ready(ready);
}

void PeerCore::ready_gather(Ready ready, std::vector<std::byte> part) {
  end_round();
  part_ = std::move(part);
  gather_ = true;
  ready.update_norm = 0;
  announce_ready(ready);
}

void PeerCore::announce_ready(const Ready& ready) {
  ready_round_ = ready.round;
  ready_ = ready;
  set_reported({});
  client_.ready(ready_);
}

void PeerCore::start_collective(const Group& group) {
  const auto me = std::find(group.members.begin(), group.members.end(), config_.self);
  if (me == group.members.end()) return;
  const auto self = static_cast<std::size_t>(me - group.members.begin());
  keep_inputs();  // of the attempt this group replaces, if it still runs
  attempt_ = group.attempt;
  group_ = group.members;
  mean_emitted_ = false;
  failure_reported_ = false;
  set_reported({});
  attempt_config_.reset();
  evidence_from_.clear();
  named_.clear();
  // The ring cannot trim (it sums partial sums): its mean is the plain one.
  trim_ = config_.all_reduce == AllReduceAlgorithm::direct ? group.trim : 0;
  tokens_ = group.tokens;
  phase_ = std::chrono::milliseconds(group.phase_ms);
  const std::vector<float> weights = contribution_weights(group.tokens);
  share_ = weights.empty() ? 0.0 : weights[self] / static_cast<double>(weights.size());
  set_relays(group);
  open_links(group.members);
  PeerEvent& started = emit(PeerEvent::Kind::collective_started);
  started.round = group.round;
  started.attempt = group.attempt;
  started.members = group.members;
  started.trim = trim_;
  if (gather_) {
    all_gather_ =
        std::make_unique<AllGather>(AllGatherConfig{.round = group.round,
                                                    .attempt = group.attempt,
                                                    .members = group.members,
                                                    .self = self,
                                                    .max_part_bytes = max_all_gather_part_bytes()},
                                    part_);
    all_gather_->start();
  } else {
    const std::uint64_t seed = group.round * 1000 + group.attempt;
    AllReduceConfig all_reduce_config{
        .round = group.round,
        .attempt = group.attempt,
        .members = group.members,
        .self = self,
        .chunk_values = config_.chunk_values,
        .codec = codec_.get(),
        .seed = seed,
        .median_norm = group.median_norm,
        .norm_limit = group.norm_limit,
        .trim = trim_,
        .weights = weights,
        .buffers = &parts_pool_,
        .check_owners = group.check_owners && config_.all_reduce == AllReduceAlgorithm::direct,
        .signer = config_.signer,
        .run_id = run_id_};
    if (encodes_once()) {
      // The direct exchange (the class comment): Δ encoded once, at the first attempt this member
      // takes part in, with that attempt's seed; later attempts send the same bytes
      // (encoded_update.hpp says why that is sound). Δ is let go once encoded.
      if (!encoded_) {
        const std::span<const float> delta = update_values();
        encoded_.emplace(*codec_, delta, direct_chunk_values(delta.size(), config_.chunk_values),
                         seed, config_.self);
        if (config_.signer != nullptr) encoded_->sign(*config_.signer, run_id_, group.round);
        update_.reset();
        borrowed_ = {};
      }
      attempt_config_ = all_reduce_config;
      if (all_reduce_config.check_owners) {
        if (attempt_configs_.size() >= 16) attempt_configs_.erase(attempt_configs_.begin());
        attempt_configs_[group.attempt] = all_reduce_config;
      }
      all_reduce_ = std::make_unique<DirectAllReduce>(std::move(all_reduce_config), *encoded_);
    } else {
      // Every attempt starts from this member's own update, which the collective only reads.
      result_ = work_pool_.take(update_->size());
      all_reduce_ =
          make_all_reduce(config_.all_reduce, std::move(all_reduce_config), *update_, *result_);
    }
    all_reduce_->start();
  }
  // Messages that came before this peer heard of its group (those of a later attempt stay).
  for (const EarlyMessages::Message& m : early_.take({group.round, group.attempt}))
    deliver(m.from, m.type, m.body);
  pump_collective();
}

// A message of the running collective, to the core of its type (the other type, which no member
// of this run sends, is ignored).
void PeerCore::deliver(const PeerKey& from, MessageType type, std::span<const std::byte> body) {
  if (type == MessageType::all_gather_part && all_gather_)
    all_gather_->on_message(from, body);
  else if (type == MessageType::ring_chunk && all_reduce_)
    all_reduce_->on_message(from, body);
  else if (type == MessageType::evidence)
    on_evidence(from, body);
}

bool PeerCore::collective_running() const {
  if (all_gather_) return !all_gather_->done() && !all_gather_->failure();
  if (all_reduce_) return !all_reduce_->done() && !all_reduce_->failure();
  return false;
}

std::uint64_t PeerCore::collective_bytes_sent() const {
  if (all_gather_) return all_gather_->bytes_sent();
  return all_reduce_ ? all_reduce_->bytes_sent() : 0;
}

void PeerCore::end_collective() {
  keep_inputs();
  all_reduce_.reset();
  all_gather_.reset();
  result_.reset();  // the ring's working buffer goes back to its pool
  gossip_deadline_ = kNever;
}

void PeerCore::end_round() {
  end_collective();
  attempt_config_.reset();
  attempt_configs_.clear();
  kept_inputs_.clear();
  ready_round_ = 0;
  set_reported({});
  update_.reset();
  borrowed_ = {};
  encoded_.reset();
  result_.reset();
  part_.clear();
}

bool PeerCore::encodes_once() const {
  return config_.all_reduce == AllReduceAlgorithm::direct && !gossip();
}

std::span<const float> PeerCore::update_values() const {
  return update_ ? std::span<const float>(*update_) : borrowed_;
}

std::optional<std::vector<float>> PeerCore::contribution() const {
  if (encoded_) return encoded_->decode(*codec_);
  const std::span<const float> delta = update_values();
  if (update_ || !delta.empty()) return std::vector<float>(delta.begin(), delta.end());
  return std::nullopt;
}

void PeerCore::fail_collective(const std::string& reason, std::optional<PeerKey> suspect) {
  if (all_reduce_) all_reduce_->fail(reason, suspect);
  if (all_gather_) all_gather_->fail(reason, suspect);
  pump_collective();
}

void PeerCore::pump_collective() {
  if (all_reduce_)
    while (auto t = all_reduce_->poll_transmit())
      send(t->to, MessageType::ring_chunk, std::move(t->body));
  if (all_gather_)
    while (auto t = all_gather_->poll_transmit())
      send(t->to, MessageType::all_gather_part, std::move(t->body));
  std::optional<std::pair<std::string, std::optional<PeerKey>>> failure;
  if (all_reduce_ && all_reduce_->failure())
    failure.emplace(all_reduce_->failure()->reason, all_reduce_->failure()->suspect);
  if (all_gather_ && all_gather_->failure())
    failure.emplace(all_gather_->failure()->reason, all_gather_->failure()->suspect);
  if (failure && !failure_reported_) {
    failure_reported_ = true;
    note(fmt::format("round {} attempt {}: {}", ready_round_, attempt_, failure->first), true);
    if (gossip()) return alone(failure->first);  // no tracker round to abort
    if (all_reduce_ && all_reduce_->failure()->proof) {
      client_.proven_misconduct(ProvenMisconduct{.proof = *all_reduce_->failure()->proof});
      return;
    }
    if (all_reduce_ && all_reduce_->failure()->evidence)
      share_evidence(*all_reduce_->failure()->evidence);
    if (failure->second) named_.insert(*failure->second);
    client_.round_failed(RoundFailed{.round = ready_round_,
                                     .attempt = attempt_,
                                     .reason = failure->first,
                                     .suspect = failure->second});
    return;
  }
  const bool done = (all_reduce_ && all_reduce_->done()) || (all_gather_ && all_gather_->done());
  if (done && !mean_emitted_) {
    mean_emitted_ = true;
    emit_mean();
  }
}

// The collective's result, moved out: the direct exchange's encoded chunks, the ring's buffer, the
// all-gather's parts. Nothing reads them here any more (the next attempt starts from the encoded
// update, or the ring's from Δ, again).
void PeerCore::emit_mean() {
  PeerEvent& out = emit(PeerEvent::Kind::mean);
  out.round = ready_round_;
  out.attempt = attempt_;
  out.members = group_;
  out.trim = trim_;
  out.tokens = tokens_;
  out.share = share_;
  out.phase = phase_;
  if (all_gather_)
    out.parts = std::make_shared<const std::vector<std::vector<std::byte>>>(all_gather_->parts());
  else if (encodes_once())
    out.mean =
        std::make_shared<const RoundMean>(static_cast<DirectAllReduce&>(*all_reduce_).take_mean(),
                                          encoded_->values(), encoded_->unit_values(), codec_);
  else
    out.mean = std::make_shared<const RoundMean>(std::move(result_));
  if (gossip())
    end_round();  // no commit follows: the round is over here
  else
    end_collective();
}

void PeerCore::share_evidence(const Evidence& evidence) {
  const std::vector<std::byte> body = encode(evidence);
  for (const PeerKey& member : group_)
    if (member != config_.self && member != evidence.accused)
      send(member, MessageType::evidence, body);
}

void PeerCore::on_evidence(const PeerKey& from, std::span<const std::byte> body) {
  const Evidence evidence = decode_evidence(body);
  if (evidence.round == ready_round_ && evidence.attempt > attempt_) {
    early_.keep({evidence.round, evidence.attempt}, from, MessageType::evidence, body);
    return;  // of an attempt this peer has not heard of yet
  }
  if (!attempt_config_ || !encoded_ || evidence.round != attempt_config_->round ||
      evidence.attempt != attempt_config_->attempt)
    return;
  const std::vector<PeerKey>& members = attempt_config_->members;
  if (std::find(members.begin(), members.end(), from) == members.end() ||
      !evidence_from_.insert(from).second || named_.contains(evidence.accused))
    return;
  const std::optional<std::string> shows =
      what_evidence_shows(evidence, evidence_context(*attempt_config_, encoded_->values()));
  if (!shows) return;
  const std::string reason = fmt::format("{} showed that {}", secure::short_id(from), *shows);
  if (collective_running()) {
    fail_collective(reason, evidence.accused);
    return;
  }
  named_.insert(evidence.accused);
  note(fmt::format("round {} attempt {}: {}", evidence.round, evidence.attempt, reason), true);
  client_.round_failed(RoundFailed{.round = evidence.round,
                                   .attempt = evidence.attempt,
                                   .reason = reason,
                                   .suspect = evidence.accused});
}

void PeerCore::round_done(std::uint64_t round, std::uint32_t attempt, const Digest& hash) {
  if (round == ready_round_) set_reported(hash);
  client_.round_done(RoundDone{.round = round, .attempt = attempt, .state_hash = hash});
}

void PeerCore::set_reported(const Digest& hash) {
  reported_ = hash;
  client_.set_tentative(hash == Digest{} ? 0 : ready_round_, hash);
}

void PeerCore::accuse(std::uint64_t round, std::uint32_t attempt, const std::string& reason,
                      const PeerKey& suspect) {
  if (round != ready_round_ || attempt != attempt_ || !collective_running()) return;
  failure_reported_ = true;
  end_collective();
  client_.round_failed(
      RoundFailed{.round = round, .attempt = attempt, .reason = reason, .suspect = suspect});
}

// --- messages from peers ---

void PeerCore::on_peer_message(TimePoint now, const PeerKey& from, MessageType type,
                               std::span<const std::byte> body) {
  switch (type) {
    case MessageType::ring_chunk:
    case MessageType::all_gather_part: {
      const CollectiveId id = collective_id(type, body);
      if (collective_running() && id.round == ready_round_ && id.attempt == attempt_) {
        deliver(from, type, body);
        pump_collective();
      } else if (id.round >= ready_round_) {
        // A collective not started here yet, or the next one under the same number: a restarted
        // tracker numbers the attempts of the round afresh while this peer's of the old one is
        // over (its round_done never reached the old tracker).
        early_.keep({id.round, id.attempt}, from, type, body);
      }
      return;
    }
    case MessageType::state_request:
    case MessageType::chunk_request:
      server_.on_message(from, type, body);
      pump_server();
      return;
    case MessageType::state_manifest:
    case MessageType::state_refusal:
    case MessageType::state_chunk:
      if (fetcher_) {
        fetcher_->on_message(now, from, type, body);
        pump_fetch(now);
      }
      return;
    case MessageType::evidence: on_evidence(from, body); return;
    case MessageType::judge_chunk:
    case MessageType::judge_inputs: on_judge_message(from, type, body); return;
    case MessageType::link_open:
      (void)open_message(body, type);  // the link is what it was for
      return;
    case MessageType::relay_refused: on_relay_refused(now, from, body); return;
    default:
      throw Error(ErrorCategory::protocol, fmt::format("a {} between peers", info(type).name));
  }
}

void PeerCore::on_peer_lost(TimePoint now, const PeerKey& peer, const std::string& why) {
  const bool needed = all_reduce_ ? all_reduce_->needs_link_to(peer)
                                  : all_gather_ && all_gather_->needs_link_to(peer);
  const std::optional<PeerKey> relay = relay_of(peer);
  if (collective_running() && needed && relay)
    // The relay, not the other end, is named: it is what a lying relay would break.
    fail_collective(fmt::format("lost the link to {} through the relay {}: {}",
                                secure::short_id(peer), secure::short_id(*relay), why),
                    relay);
  else if (collective_running() && needed)
    // Named: the tracker retries without it alone if it sees it leave too (a crash).
    fail_collective(fmt::format("lost the connection to {}: {}", secure::short_id(peer), why),
                    peer);
  if (fetcher_) {
    fetcher_->on_donor_lost(now, peer);
    pump_fetch(now);
  }
}

void PeerCore::on_timer(TimePoint now) {
  if (fetcher_ && fetcher_->poll_timeout() <= now) {
    fetcher_->on_timer(now);
    pump_fetch(now);
  }
  if (ask_again_ <= now) {
    ask_again_ = kNever;
    if (!fetcher_) client_.state_report();  // answered by a resync with new donors
  }
  if (gossip_deadline_ <= now) gossip_wait_over(now);
  judge_timer(now);
}

TimePoint PeerCore::poll_timeout() const {
  TimePoint t = std::min(ask_again_, gossip_deadline_);
  if (fetcher_) t = std::min(t, fetcher_->poll_timeout());
  for (const auto& [id, j] : judging_) t = std::min(t, j.deadline);
  return t;
}

// --- fetching and serving the state ---

void PeerCore::start_fetch(TimePoint now, const Resync& resync) {
  fetching_ = resync;
  fetch_told_ = now;
  reported_donors_.clear();
  ask_again_ = kNever;
  std::vector<PeerKey> donors;
  for (const Donor& d : resync.donors) donors.push_back(d.key);
  note(fmt::format("fetching the state of round {} from {} donor(s)", resync.round, donors.size()),
       false);
  fetcher_ = std::make_unique<StateFetcher>(
      FetchConfig{.round = resync.round, .state_hash = resync.state_hash, .donors = donors}, now);
  pump_fetch(now);
}

void PeerCore::pump_fetch(TimePoint now) {
  if (!fetcher_) return;
  while (auto t = fetcher_->poll_transmit()) send(t->to, t->type, std::move(t->body));
  for (const auto& [donor, why] : fetcher_->bad_donors())
    if (reported_donors_.insert(donor).second)  // once: bad_donors() keeps them all
      client_.report(MisbehaviourReport{.suspect = donor, .reason = why});
  if (fetcher_->done()) {
    PeerEvent& out = emit(PeerEvent::Kind::fetched);
    out.round = fetching_.round;
    out.hash = fetching_.state_hash;
    out.phase = std::chrono::milliseconds(fetching_.phase_ms);
    out.told = fetch_told_;
    out.state = std::make_shared<const std::vector<std::byte>>(fetcher_->state().begin(),
                                                               fetcher_->state().end());
    out.members.assign(fetcher_->served_by().begin(), fetcher_->served_by().end());
    fetcher_.reset();
    fetch_pending_ = false;
    fetch_backoff_.reset();
  } else if (fetcher_->failure()) {
    const Duration wait = fetch_backoff_.next();
    note(fmt::format("fetching round {}: {}; asking the tracker again in {:.2f} s", fetching_.round,
                     *fetcher_->failure(), std::chrono::duration<double>(wait).count()),
         true);
    fetcher_.reset();
    ask_again_ = now + wait;
  }
}

void PeerCore::serve(StateManifest manifest, StateBytes bytes, std::shared_ptr<const void> keep) {
  client_.set_state(manifest.round, manifest.state_hash());
  serving_ = true;
  served_round_ = manifest.round;
  served_hash_ = manifest.state_hash();
  served_ = std::move(keep);
  server_.serve(std::move(manifest), std::move(bytes));
}

void PeerCore::unserve() {
  serving_ = false;
  served_.reset();
  server_.clear();
}

void PeerCore::pump_server() {
  while (auto t = server_.poll_transmit()) send(t->to, t->type, std::move(t->body), true);
}

void PeerCore::state_report(std::uint64_t round, const Digest& hash) {
  client_.set_state(round, hash);
  client_.state_report();
}

void PeerCore::leave(const std::string& reason) {
  end_round();
  fetcher_.reset();
  ask_again_ = kNever;
  client_.leave(reason);
}

// --- outputs ---

// A state-transfer message to the tracker goes over its link (custody); the rest to the peer.
void PeerCore::send(const PeerKey& to, MessageType type, std::vector<std::byte> body, bool answer) {
  if (to == tracker_key_) {
    client_.relay(type, body);
    return;
  }
  // The next hop: `to`, or the relay of this peer's link with it.
  const std::optional<PeerKey> relay = relay_of(to);
  const PeerKey& hop = relay ? *relay : to;
  const HopLookup& look = look_up_hop(hop);
  const Member* m = look.member;
  const Reachability reach = m != nullptr ? m->reachability : Reachability::unmeasured;
  transmits_.push_back(Send{
      .to = hop,
      .address = m != nullptr ? m->address : address_of(hop),
      .on = send_on(look.self, reach, answer && !relay),
      .type = type,
      .body = std::move(body),
      .relayed =
          relay ? std::optional(RelayHeader{.round = ready_round_, .attempt = attempt_, .peer = to})
                : std::nullopt});
}

const PeerCore::HopLookup& PeerCore::look_up_hop(const PeerKey& hop) {
  const std::uint64_t changes = client_.view_changes();
  if (!hop_lookup_ || hop_lookup_->view_changes != changes) {
    hop_lookup_ = HopLookup{.view_changes = changes,
                            .hop = hop,
                            .member = client_.member(hop),
                            .self = reachability_of(config_.self)};
  } else if (hop_lookup_->hop != hop) {
    hop_lookup_->hop = hop;
    hop_lookup_->member = client_.member(hop);
  }
  return *hop_lookup_;
}

Reachability PeerCore::reachability_of(const PeerKey& peer) const {
  const Member* m = client_.member(peer);
  return m != nullptr ? m->reachability : Reachability::unmeasured;
}

void PeerCore::open_links(const std::vector<PeerKey>& members) {
  const Reachability self = reachability_of(config_.self);
  // A peer that would not dial even a reachable member dials none: skip the lookup of each member
  // (a group of a thousand, at every attempt).
  if (link_direction(self, Reachability::reachable) != LinkDirection::dial) return;
  for (const PeerKey& m : members)
    if (m != config_.self && link_direction(self, reachability_of(m)) == LinkDirection::dial)
      send(m, MessageType::link_open, start_message(MessageType::link_open).finish());
}

void PeerCore::note_own_reachability() {
  const Member* self = client_.member(config_.self);
  if (self == nullptr || self->reachability == reach_noted_ ||
      self->reachability == Reachability::unmeasured)
    return;
  reach_noted_ = self->reachability;
  if (reach_noted_ == Reachability::reachable) {
    note(fmt::format("the tracker reached this peer at {}: reachable from the internet, other "
                     "peers connect to it",
                     self->address),
         false);
  } else {
    note(fmt::format("not reachable from the internet at {} (the tracker's probe of this "
                     "address, at this peer's join, got no answer from it there): this peer "
                     "connects to the reachable members itself and they answer on "
                     "that link; its links with other unreachable peers go through a reachable "
                     "one that relays them. To be reachable, turn on UPnP or NAT-PMP on the "
                     "router, or forward this port and set --peer.advertise",
                     self->address),
         true);
  }
}

std::string PeerCore::address_of(const PeerKey& peer) const {
  if (const Member* m = client_.member(peer)) return m->address;
  for (const Donor& d : fetching_.donors)
    if (d.key == peer) return d.address;
  return {};
}

PeerEvent& PeerCore::emit(PeerEvent::Kind kind) {
  events_.push_back(PeerEvent{.kind = kind});
  return events_.back();
}

void PeerCore::note(std::string text, bool warning) {
  PeerEvent& out = emit(PeerEvent::Kind::note);
  out.text = std::move(text);
  out.warning = warning;
}

std::optional<PeerEvent> PeerCore::poll_event() {
  if (events_.empty()) return std::nullopt;
  PeerEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

std::optional<PeerCore::Send> PeerCore::poll_transmit() {
  if (transmits_.empty()) return std::nullopt;
  Send t = std::move(transmits_.front());
  transmits_.pop_front();
  return t;
}

}  // namespace loco::proto
