#include "loco/swarm/swarm_session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/net/host_port.hpp"
#include "loco/proto/gossip_groups.hpp"
#include "loco/proto/state_relay.hpp"
#include "loco/version.hpp"

namespace loco::swarm {
namespace {

// Messages of a collective not started here yet wait for it, up to this many.
constexpr std::size_t kMaxEarlyMessages = 1024;

// After a failed fetch (every donor gone or wrong) the peer asks the tracker for new donors after
// this long, doubling up to the maximum: donors that just died are still in the view a while.
constexpr Duration kFirstFetchBackoff = std::chrono::milliseconds(250);
constexpr Duration kMaxFetchBackoff = std::chrono::seconds(8);

// The (round, attempt) a collective's message (an all-reduce chunk or an all-gather part)
// belongs to, and the fault point it reaches.
std::pair<std::uint64_t, std::uint32_t> collective_id(proto::MessageType type,
                                                      std::span<const std::byte> body) {
  if (type == proto::MessageType::all_gather_part) return proto::all_gather_part_id(body);
  std::span<const std::byte> payload;
  const proto::ChunkHeader h = proto::decode_chunk(body, payload);
  return {h.round, h.attempt};
}
FaultPoint fault_point_of(proto::MessageType type, std::span<const std::byte> body) {
  if (type == proto::MessageType::all_gather_part) return FaultPoint::all_gather;
  std::span<const std::byte> payload;
  return proto::decode_chunk(body, payload).phase == 0 ? FaultPoint::reduce_scatter
                                                       : FaultPoint::all_gather;
}

}  // namespace

SwarmSession::SwarmSession(boost::asio::io_context& io, SwarmConfig config,
                           const secure::KeyPair& identity, Mailbox& mailbox,
                           TrafficCounters& traffic)
    : io_(io),
      config_(std::move(config)),
      identity_(identity),
      mailbox_(mailbox),
      traffic_(traffic),
      codec_(compress::make_codec(config_.codec)),
      early_(kMaxEarlyMessages),
      gossip_timer_(io),
      fetch_timer_(io),
      fetch_backoff_(kFirstFetchBackoff) {}

void SwarmSession::start(const Digest& genesis, std::uint64_t state_round,
                         const Digest& state_hash) {
  const net::ChannelSetup member_setup{
      .identity = &identity_,
      .config =
          secure::ChannelConfig{.run_id = config_.run_id, .idle_timeout = config_.idle_timeout},
      .accept = [this](const secure::PublicKey& k) { return client_ && client_->is_member(k); },
      .peer_label = {}};
  mesh_ = net::PeerMesh::create(
      io_, net::resolve(io_, net::parse_host_port(config_.listen, /*allow_any_port=*/true)),
      net::PeerMeshConfig{.setup = member_setup,
                          .bundle = config_.bundle,
                          .link = config_.link,
                          .limits = config_.listener_limits},
      net::PeerMeshHandlers{
          .on_message = [this](
                            const proto::PeerKey& from, proto::MessageType type,
                            std::span<const std::byte> body) { on_mesh_message(from, type, body); },
          .on_lost = [this](const proto::PeerKey& peer,
                            const std::string& why) { on_mesh_lost(peer, why); }});
  mesh_->start();
  const std::string advertise = config_.advertise.empty()
                                    ? fmt::format("127.0.0.1:{}", mesh_->local_endpoint().port())
                                    : config_.advertise;
  client_ = std::make_unique<proto::TrackerClient>(proto::TrackerClientConfig{
      .run_id = config_.run_id,
      .tracker_key = config_.tracker_key,
      .join = proto::JoinRequest{.software = fmt::format("loco {}", kVersion),
                                 .listen_address = advertise,
                                 .upload_bps = config_.upload_bps,
                                 .credential = config_.credential,
                                 .settings = config_.settings,
                                 .genesis = genesis,
                                 .state_round = state_round,
                                 .state_hash = state_hash}});
  const proto::PeerKey pin = config_.tracker_key;
  link_ = net::TrackerLink::create(
      io_, net::resolve(io_, net::parse_host_port(config_.tracker_address)),
      net::ChannelSetup{.identity = &identity_,
                        .config = secure::ChannelConfig{.run_id = config_.run_id},
                        .accept = [pin](const secure::PublicKey& k) { return k == pin; },
                        .peer_label = fmt::format("the tracker at {}", config_.tracker_address)},
      *client_, [this](const proto::ClientEvent& e) { on_client_event(e); });
  link_->start();
}

void SwarmSession::on_client_event(const proto::ClientEvent& e) {
  using Kind = proto::ClientEvent::Kind;
  switch (e.kind) {
    case Kind::joined: {
      SwarmEvent out{.kind = SwarmEvent::Kind::joined};
      out.reply = e.reply;
      mailbox_.post(std::move(out));
      if (ready_round_ != 0) {  // joined again mid-round: the tracker forgot the ready
        client_->ready(ready_);
        link_->flush();
      }
      return;
    }
    case Kind::refused:
      mailbox_.post(SwarmEvent{.kind = SwarmEvent::Kind::refused, .text = e.text});
      link_->stop();
      return;
    case Kind::group:
      if (e.group.round == ready_round_) start_collective(e.group);
      return;
    case Kind::commit: {
      if (tentative_state_ != nullptr && e.commit.round == ready_round_ &&
          e.commit.state_hash == tentative_manifest_.state_hash())
        serve_tentative();
      end_collective();
      ready_round_ = 0;
      SwarmEvent out{.kind = SwarmEvent::Kind::committed};
      out.round = e.commit.round;
      out.attempt = e.commit.attempt;
      out.hash = e.commit.state_hash;
      mailbox_.post(std::move(out));
      return;
    }
    case Kind::abort_round: {
      end_collective();
      if (!e.abort.retry) ready_round_ = 0;
      SwarmEvent out{.kind = SwarmEvent::Kind::aborted, .text = e.abort.reason};
      out.round = e.abort.round;
      out.attempt = e.abort.attempt;
      out.retry = e.abort.retry;
      mailbox_.post(std::move(out));
      return;
    }
    case Kind::resync: {
      // The tracker repeats a resync (to a ready, a state report, each commit); a second fetch of
      // the same state would take the first one's answers for its own and blame the donors.
      if (fetcher_ && fetching_.round == e.resync.round &&
          fetching_.state_hash == e.resync.state_hash)
        return;
      end_collective();
      ready_round_ = 0;
      if (served_ && served_round_ == e.resync.round && served_hash_ == e.resync.state_hash) {
        // The state this peer holds. Its report may just not have reached the tracker yet (a
        // repeated resync): say it again. Or the compute thread waits for a fetch of a state no
        // one held and the run went back to this one: it takes it from itself.
        fetcher_.reset();
        if (std::exchange(fetch_pending_, false)) {
          SwarmEvent out{.kind = SwarmEvent::Kind::fetched};
          out.round = e.resync.round;
          out.hash = e.resync.state_hash;
          out.state = served_;
          mailbox_.post(std::move(out));
        } else {
          client_->state_report();
          link_->flush();
        }
        return;
      }
      fetch_pending_ = true;
      SwarmEvent out{.kind = SwarmEvent::Kind::must_fetch};
      out.round = e.resync.round;
      out.hash = e.resync.state_hash;
      mailbox_.post(std::move(out));
      start_fetch(e.resync);
      return;
    }
    case Kind::state_relay: on_tracker_state(e.relay_type, e.relay_body); return;
    case Kind::view:
      if (gossip() && ready_round_ != 0 && collective_running() && !gossip_group_whole()) {
        all_reduce_->fail(fmt::format("a member of the group of round {} left", ready_round_),
                          std::nullopt);
        pump_collective();
      }
      return;
    case Kind::tracker_lost:
    case Kind::tracker_error: return;  // the client keeps the view; the link reconnects
  }
}

void SwarmSession::ready(const proto::Ready& ready, std::vector<float> delta, Tentative tentative) {
  if (config_.poison == "scale")
    for (float& v : delta) v *= 1000.0f;
  delta_ = std::move(delta);
  tentative_ = std::move(tentative);
  gather_ = false;
  proto::Ready told = ready;
  if (config_.poison == "nan") told.update_norm = std::numeric_limits<float>::quiet_NaN();
  announce_ready(told);
}

void SwarmSession::ready_gather(proto::Ready ready, std::vector<std::byte> part) {
  part_ = std::move(part);
  tentative_ = {};
  gather_ = true;
  ready.update_norm = 0;
  announce_ready(ready);
}

void SwarmSession::ready_gossip(std::uint64_t round, std::vector<float> packed) {
  delta_ = std::move(packed);
  tentative_ = {};
  gather_ = false;
  ready_round_ = round;
  client_->forget_removals_before(round);
  // Empty when the round's roster does not list this peer (a newcomer's first rounds): alone.
  gossip_group_ = proto::gossip_group_of(
      proto::GossipRound{
          .run_id = config_.run_id, .round = round, .group_size = config_.gossip_group},
      client_->gossip_roster(round), identity_.public_key());
  if (gossip_group_.size() < 2 || !gossip_group_whole()) {
    post_alone();
    return;
  }
  start_collective(proto::Group{.round = round,
                                .attempt = 0,
                                .epoch = client_->view().epoch,
                                .members = gossip_group_,
                                .median_norm = 0,
                                .norm_limit = 0});
  arm_gossip_wait(round);
}

// A group is whole or not at all: when a member does not take part in the round (gone, or back as
// a new process listed from a later round), every other member applies alone, whether it learns
// so before its exchange or during it (on_client_event), so all conclude alike.
bool SwarmSession::gossip_group_whole() const {
  return std::all_of(gossip_group_.begin(), gossip_group_.end(), [&](const proto::PeerKey& m) {
    return client_->present_in_round(m, ready_round_);
  });
}

// A group not done in gossip_wait once the run is at its round (the tracker's next round) leaves
// this peer alone for the round; one ahead of the run waits on for partners that are only slower.
void SwarmSession::arm_gossip_wait(std::uint64_t round) {
  gossip_timer_.expires_after(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(config_.gossip_wait));
  gossip_timer_.async_wait([this, round](const boost::system::error_code& error) {
    if (error || ready_round_ != round || !collective_running()) return;
    if (client_->next_round() < round) return arm_gossip_wait(round);
    all_reduce_->fail(fmt::format("the group of round {} was not done in the gossip wait", round),
                      std::nullopt);
    pump_collective();
  });
}

// Gossip mode: this peer applies its own state and update for the round (never a partial mean).
void SwarmSession::post_alone() {
  end_collective();
  gossip_timer_.cancel();
  SwarmEvent out{.kind = SwarmEvent::Kind::mean};
  out.round = ready_round_;
  out.members = 1;
  out.mean = std::make_shared<const std::vector<float>>(delta_);
  ready_round_ = 0;
  mailbox_.post(std::move(out));
}

void SwarmSession::announce_ready(const proto::Ready& ready) {
  ready_round_ = ready.round;
  ready_ = ready;
  client_->ready(ready_);
  link_->flush();
}

void SwarmSession::start_collective(const proto::Group& group) {
  const auto me = std::find(group.members.begin(), group.members.end(), identity_.public_key());
  if (me == group.members.end()) return;
  const auto self = static_cast<std::size_t>(me - group.members.begin());
  attempt_ = group.attempt;
  group_size_ = group.members.size();
  mean_posted_ = false;
  failure_reported_ = false;
  if (gather_) {
    all_gather_ = std::make_unique<proto::AllGather>(
        proto::AllGatherConfig{.round = group.round,
                               .attempt = group.attempt,
                               .members = group.members,
                               .self = self,
                               .max_part_bytes = proto::max_all_gather_part_bytes()},
        part_);
    all_gather_->start();
  } else {
    work_ = delta_;  // every attempt starts from this member's own update
    all_reduce_ =
        proto::make_all_reduce(config_.all_reduce,
                               proto::AllReduceConfig{.round = group.round,
                                                      .attempt = group.attempt,
                                                      .members = group.members,
                                                      .self = self,
                                                      .chunk_values = config_.chunk_values,
                                                      .codec = codec_.get(),
                                                      .seed = group.round * 1000 + group.attempt,
                                                      .median_norm = group.median_norm,
                                                      .norm_limit = group.norm_limit,
                                                      .trim = group.trim},
                               work_);
    all_reduce_->start();
  }
  // Messages that came before this peer heard of its group (those of a later attempt stay).
  for (const proto::EarlyMessages::Message& m : early_.take({group.round, group.attempt}))
    deliver(m.from, m.type, m.body);
  pump_collective();
}

// A message of the running collective: to the core of its type (the other type, which no member
// of this run sends, is ignored).
void SwarmSession::deliver(const proto::PeerKey& from, proto::MessageType type,
                           std::span<const std::byte> body) {
  if (type == proto::MessageType::all_gather_part && all_gather_) {
    reach(FaultPoint::all_gather, ready_round_);
    all_gather_->on_message(from, body);
  } else if (type == proto::MessageType::ring_chunk && all_reduce_) {
    reach(fault_point_of(type, body), ready_round_);
    all_reduce_->on_message(from, body);
  }
}

bool SwarmSession::collective_running() const {
  if (all_gather_) return !all_gather_->done() && !all_gather_->failure();
  if (all_reduce_) return !all_reduce_->done() && !all_reduce_->failure();
  return false;
}

void SwarmSession::end_collective() {
  all_reduce_.reset();
  all_gather_.reset();
  tentative_state_ = nullptr;
}

void SwarmSession::pump_collective() {
  if (all_reduce_)
    while (auto t = all_reduce_->poll_transmit())
      mesh_->send(t->to, address_of(t->to), proto::MessageType::ring_chunk, std::move(t->body));
  if (all_gather_)
    while (auto t = all_gather_->poll_transmit())
      mesh_->send(t->to, address_of(t->to), proto::MessageType::all_gather_part,
                  std::move(t->body));
  count_traffic();
  std::optional<std::pair<std::string, std::optional<proto::PeerKey>>> failure;
  if (all_reduce_ && all_reduce_->failure())
    failure.emplace(all_reduce_->failure()->reason, all_reduce_->failure()->suspect);
  if (all_gather_ && all_gather_->failure())
    failure.emplace(all_gather_->failure()->reason, all_gather_->failure()->suspect);
  if (failure && !failure_reported_) {
    failure_reported_ = true;
    spdlog::warn("round {} attempt {}: {}", ready_round_, attempt_, failure->first);
    if (config_.gossip_group != 0) {  // no tracker round to abort: alone for this round
      post_alone();
      return;
    }
    client_->round_failed(proto::RoundFailed{.round = ready_round_,
                                             .attempt = attempt_,
                                             .reason = failure->first,
                                             .suspect = failure->second});
    link_->flush();
    return;
  }
  const bool done = (all_reduce_ && all_reduce_->done()) || (all_gather_ && all_gather_->done());
  if (done && !mean_posted_) {
    mean_posted_ = true;
    post_result();
    if (config_.gossip_group != 0) {  // no commit follows: the round is over here
      gossip_timer_.cancel();
      end_collective();
      ready_round_ = 0;
    }
  }
}

// The collective's result to the compute thread: the all-gather's parts, the all-reduce's mean,
// or (a round with a tentative) the hash of the state it leads to, reported from here at once.
void SwarmSession::post_result() {
  SwarmEvent out{.kind = SwarmEvent::Kind::mean};
  out.round = ready_round_;
  out.attempt = attempt_;
  out.members = group_size_;
  if (all_gather_) {
    out.parts = std::make_shared<const std::vector<std::vector<std::byte>>>(all_gather_->parts());
  } else if (tentative_) {
    tentative_state_ = &tentative_(work_);
    tentative_manifest_ = tentative_state_->manifest();
    out.hash = tentative_manifest_.state_hash();
    round_done(ready_round_, attempt_, out.hash);
  } else {
    out.mean = std::make_shared<const std::vector<float>>(work_.begin(), work_.end());
  }
  mailbox_.post(std::move(out));
}

void SwarmSession::round_done(std::uint64_t round, std::uint32_t attempt, const Digest& hash) {
  client_->round_done(proto::RoundDone{.round = round, .attempt = attempt, .state_hash = hash});
  link_->flush();
}

void SwarmSession::on_mesh_message(const proto::PeerKey& from, proto::MessageType type,
                                   std::span<const std::byte> body) {
  try {
    switch (type) {
      case proto::MessageType::ring_chunk:
      case proto::MessageType::all_gather_part: {
        const auto id = collective_id(type, body);
        if (collective_running() && id == std::pair(ready_round_, attempt_)) {
          deliver(from, type, body);
          pump_collective();
        } else if (id.first >= ready_round_) {
          // A collective not started here yet, or the next one under the same number: a
          // restarted tracker numbers the attempts of the round afresh while this peer's of the
          // old one is over (its round_done never reached the old tracker).
          early_.keep(id, from, type, body);
        }
        return;
      }
      case proto::MessageType::state_request:
      case proto::MessageType::chunk_request:
        reach(FaultPoint::serve, served_round_);
        server_.on_message(from, type, body);
        pump_server();
        return;
      case proto::MessageType::state_manifest:
      case proto::MessageType::state_refusal:
      case proto::MessageType::state_chunk:
        if (fetcher_) {
          fetcher_->on_message(steady_now(), from, type, body);
          pump_fetch();
        }
        return;
      default:
        throw Error(ErrorCategory::protocol,
                    fmt::format("a {} between peers", proto::info(type).name));
    }
  } catch (const Error& e) {
    spdlog::warn("peer {}: {}; dropping it", secure::short_id(from), e.what());
    mesh_->drop(from);
  }
}

// The tracker's custody: it pulls this peer's state (requests), or this peer fetches the tracker's
// copy (answers), over the tracker link.
void SwarmSession::on_tracker_state(proto::MessageType type, std::span<const std::byte> body) {
  try {
    if (proto::is_state_request(type)) {
      server_.on_message(config_.tracker_key, type, body);
      pump_server();
    } else if (fetcher_) {
      fetcher_->on_message(steady_now(), config_.tracker_key, type, body);
      pump_fetch();
    }
  } catch (const Error& e) {
    spdlog::warn("the tracker sent a bad {}: {}", proto::info(type).name, e.what());
  }
}

void SwarmSession::send_state(const proto::PeerKey& to, const std::string& address,
                              proto::MessageType type, std::vector<std::byte> body) {
  if (to == config_.tracker_key) {
    client_->relay(type, body);
    link_->flush();
    return;
  }
  mesh_->send(to, address, type, std::move(body));
}

void SwarmSession::on_mesh_lost(const proto::PeerKey& peer, const std::string& why) {
  spdlog::info("the link with peer {} ended: {}", secure::short_id(peer), why);
  const bool needed = all_reduce_ ? all_reduce_->needs_link_to(peer)
                                  : all_gather_ && all_gather_->needs_link_to(peer);
  if (collective_running() && needed) {
    const std::string lost =
        fmt::format("lost the connection to {}: {}", secure::short_id(peer), why);
    // Named: the tracker retries without it alone if it sees it leave too (a crash).
    if (all_reduce_) all_reduce_->fail(lost, peer);
    if (all_gather_) all_gather_->fail(lost, peer);
    pump_collective();
  }
  if (fetcher_) {
    fetcher_->on_donor_lost(steady_now(), peer);
    pump_fetch();
  }
}

void SwarmSession::start_fetch(const proto::Resync& resync) {
  fetching_ = resync;
  reported_.clear();
  std::vector<proto::PeerKey> donors;
  for (const proto::Donor& d : resync.donors) donors.push_back(d.key);
  spdlog::info("fetching the state of round {} from {} donor(s)", resync.round, donors.size());
  fetcher_ = std::make_unique<proto::StateFetcher>(
      proto::FetchConfig{.round = resync.round, .state_hash = resync.state_hash, .donors = donors},
      steady_now());
  pump_fetch();
}

void SwarmSession::pump_fetch() {
  if (!fetcher_) return;
  while (auto t = fetcher_->poll_transmit()) {
    std::string address;
    for (const proto::Donor& d : fetching_.donors)
      if (d.key == t->to) address = d.address;
    send_state(t->to, address, t->type, std::move(t->body));
  }
  count_traffic();
  for (const auto& [donor, why] : fetcher_->bad_donors())
    if (reported_.insert(donor).second)  // once: bad_donors() keeps them all
      client_->report(proto::MisbehaviourReport{.suspect = donor, .reason = why});
  if (fetcher_->done()) {
    SwarmEvent out{.kind = SwarmEvent::Kind::fetched};
    out.round = fetching_.round;
    out.hash = fetching_.state_hash;
    out.state = std::make_shared<const std::vector<std::byte>>(fetcher_->state().begin(),
                                                               fetcher_->state().end());
    fetcher_.reset();
    fetch_pending_ = false;
    fetch_backoff_ = kFirstFetchBackoff;
    mailbox_.post(std::move(out));
  } else if (fetcher_->failure()) {
    spdlog::warn("fetching round {}: {}; asking the tracker again in {:.2f} s", fetching_.round,
                 *fetcher_->failure(), std::chrono::duration<double>(fetch_backoff_).count());
    fetcher_.reset();
    fetch_timer_.expires_after(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(fetch_backoff_));
    fetch_backoff_ = std::min(2 * fetch_backoff_, kMaxFetchBackoff);
    fetch_timer_.async_wait([this](const boost::system::error_code& error) {
      if (error || fetcher_) return;  // a resync came meanwhile
      client_->state_report();        // the tracker answers an out-of-sync report with new donors
      link_->flush();
    });
  } else {
    fetch_timer_.expires_at(to_steady(fetcher_->poll_timeout()));
    fetch_timer_.async_wait([this](const boost::system::error_code& error) {
      if (error || !fetcher_) return;
      fetcher_->on_timer(steady_now());
      pump_fetch();
    });
  }
  link_->flush();
}

// The committed state of an asynchronous round, before the compute thread lands it: newcomers
// fetch the run's committed state, and the members' own copies are a round behind until then.
void SwarmSession::serve_tentative() {
  const proto::StateBytes bytes = tentative_state_->bytes();
  auto copy = std::make_shared<std::vector<std::byte>>(bytes.size());
  bytes.read(0, *copy);
  serve(std::move(tentative_manifest_), std::move(copy));
}

void SwarmSession::serve(proto::StateManifest manifest,
                         std::shared_ptr<const std::vector<std::byte>> state) {
  client_->set_state(manifest.round, manifest.state_hash());
  served_round_ = manifest.round;
  served_hash_ = manifest.state_hash();
  served_ = std::move(state);
  server_.serve(std::move(manifest), proto::StateBytes({std::span(*served_)}));
}

void SwarmSession::pump_server() {
  while (auto t = server_.poll_transmit())
    send_state(t->to, address_of(t->to), t->type, std::move(t->body));
  count_traffic();
}

void SwarmSession::state_report(std::uint64_t round, const Digest& hash) {
  client_->set_state(round, hash);
  client_->state_report();
  link_->flush();
}

void SwarmSession::stats(const proto::Heartbeat& heartbeat) {
  client_->set_stats(heartbeat);
}

void SwarmSession::leave(const std::string& reason) {
  // Nothing the compute thread owns is read from here on: it frees its state once we are out.
  tentative_ = {};
  tentative_state_ = nullptr;
  if (client_) client_->leave(reason);
  if (link_) link_->stop();
  if (mesh_) mesh_->stop();
  fetch_timer_.cancel();
  gossip_timer_.cancel();
}

std::string SwarmSession::address_of(const proto::PeerKey& peer) const {
  for (const proto::Member& m : client_->view().members)
    if (m.key == peer) return m.address;
  return {};
}

void SwarmSession::reach(FaultPoint point, std::uint64_t round) const {
  if (config_.fault_point) config_.fault_point(point, round);
}

void SwarmSession::count_traffic() {
  traffic_.sent = mesh_->bytes_sent();
  traffic_.received = mesh_->bytes_received();
}

}  // namespace loco::swarm
