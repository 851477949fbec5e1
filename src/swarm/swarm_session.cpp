#include "loco/swarm/swarm_session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "loco/core/error.hpp"
#include "loco/net/host_port.hpp"
#include "loco/proto/relay_messages.hpp"
#include "loco/proto/state_relay.hpp"
#include "loco/version.hpp"

namespace loco::swarm {
namespace {

// Where the others reach this peer when it does not say: the address it listens on, with the port
// it got; 127.0.0.1 for a listener on every address (a local swarm's).
std::string default_advertise(const boost::asio::ip::tcp::endpoint& listening) {
  const auto ip = listening.address();
  if (ip.is_unspecified()) return fmt::format("127.0.0.1:{}", listening.port());
  return net::to_string(net::HostPort{.host = ip.to_string(), .port = listening.port()});
}

}  // namespace

SwarmSession::SwarmSession(boost::asio::io_context& io, SwarmConfig config,
                           const secure::KeyPair& identity, round::Mailbox& mailbox,
                           round::TrafficCounters& traffic, round::SharedStateGuard& guard)
    : io_(io),
      config_(std::move(config)),
      identity_(identity),
      mailbox_(mailbox),
      traffic_(traffic),
      guard_(guard),
      timer_(io) {}

void SwarmSession::start(const Digest& genesis, std::uint64_t state_round,
                         const Digest& state_hash) {
  const net::ChannelSetup member_setup{
      .identity = &identity_,
      .config =
          secure::ChannelConfig{.run_id = config_.run_id, .idle_timeout = config_.idle_timeout},
      // The members of the view, and the tracker's reachability probe.
      .accept =
          [this](const secure::PublicKey& k) {
            return k == config_.tracker_key || (core_ && core_->client().is_member(k));
          },
      .peer_label = {}};
  mesh_ = net::PeerMesh::create(
      io_, net::resolve(io_, net::parse_host_port(config_.listen, /*allow_any_port=*/true)),
      net::PeerMeshConfig{.setup = member_setup,
                          .bundle = config_.bundle,
                          .link = config_.link,
                          .limits = config_.listener_limits,
                          .prober = config_.tracker_key},
      net::PeerMeshHandlers{
          .on_message = [this](
                            const proto::PeerKey& from, proto::MessageType type,
                            std::span<const std::byte> body) { on_mesh_message(from, type, body); },
          .on_lost =
              [this](const proto::PeerKey& peer, const std::string& why) {
                spdlog::info("the link with peer {} ended: {}", secure::short_id(peer), why);
                shards_->on_lost(peer, why);
                core_->on_peer_lost(steady_now(), peer, why);
                drive();
              }});
  mesh_->start();
  if (config_.advertise.empty() && config_.port_mapping)
    router_port_ = net::RouterPort::open(io_, mesh_->local_endpoint());
  const std::string advertise = !config_.advertise.empty() ? config_.advertise
                                : router_port_             ? router_port_->external_address()
                                               : default_advertise(mesh_->local_endpoint());
  std::vector<boost::asio::ip::tcp::endpoint> trackers;  // one, or each replica's
  for (const net::HostPort& address : net::parse_host_port_list(config_.tracker_address))
    trackers.push_back(net::resolve(io_, address));
  core_ = std::make_unique<proto::PeerCore>(
      proto::PeerCoreConfig{.self = identity_.public_key(),
                            .signer = &identity_,
                            .codec = config_.codec,
                            .chunk_values = config_.chunk_values,
                            .all_reduce = config_.all_reduce,
                            .gossip_group = config_.gossip_group,
                            .gossip_wait = config_.gossip_wait,
                            .gossip_group_of = {},
                            .relay = config_.relay},
      proto::TrackerClientConfig{
          .run_id = config_.run_id,
          .tracker_key = config_.tracker_key,
          .join = proto::JoinRequest{.software = fmt::format("loco {}", kVersion),
                                     .listen_address = advertise,
                                     .upload_bps = config_.upload_bps,
                                     .credential = config_.credential,
                                     .settings = config_.settings,
                                     .genesis = genesis,
                                     .state_round = state_round,
                                     .state_hash = state_hash},
          .addresses = trackers.size()});
  compute_ = std::make_unique<round::ComputeLink>(*core_, mailbox_, guard_, config_.poison);
  relayed_ = std::make_unique<net::RelayedLinks>(identity_, config_.run_id);
  shards_ = std::make_unique<ShardService>(
      io_, config_.shards, config_.serve, config_.corrupt_shards,
      [this](const proto::PeerKey& to, proto::MessageType type, std::vector<std::byte> body,
             proto::SendOn on) {
        const proto::Member* member = core_->client().member(to);
        mesh_->send(to, member != nullptr ? member->address : "", type, std::move(body), on);
      });
  const proto::PeerKey pin = config_.tracker_key;
  link_ = net::TrackerLink::create(
      io_, std::move(trackers),
      net::ChannelSetup{.identity = &identity_,
                        .config = secure::ChannelConfig{.run_id = config_.run_id},
                        .accept = [pin](const secure::PublicKey& k) { return k == pin; },
                        .peer_label = fmt::format("the tracker at {}", config_.tracker_address)},
      core_->client(), [this](const proto::ClientEvent& e) {
        {
          // The tracker's custody pulls the state over this link (the guard is not held while
          // the core's events are handled: a round's tentative takes it again).
          const std::shared_lock<std::shared_mutex> lock = compute_->guard_for(e);
          core_->on_client_event(steady_now(), e);
        }
        drive();
      });
  link_->start();
}

void SwarmSession::drive() {
  // Until nothing moves: what the relayed links deliver is input to the core again.
  for (bool moved = true; moved;) {
    while (auto e = core_->poll_event()) on_core_event(*e);
    while (auto t = core_->poll_transmit()) {
      if (t->relayed)  // through the end-to-end channel with the other end
        relayed_->send(steady_now(), t->to, *t->relayed, t->type, t->body);
      else
        mesh_->send(t->to, t->address, t->type, std::move(t->body), t->on);
    }
    moved = drain_relayed();
  }
  link_->flush();
  traffic_.sent = mesh_->bytes_sent();
  traffic_.received = mesh_->bytes_received();
  traffic_.relayed = core_->relay().bytes_relayed();
  arm_timer();
}

bool SwarmSession::drain_relayed() {
  while (auto t = relayed_->poll_transmit()) {
    const proto::Member* relay = core_->client().member(t->relay);
    if (relay == nullptr) {  // left the run: the link fails with it
      relayed_dropped(fmt::format("relayed bytes through {}, not in this peer's view",
                                  secure::short_id(t->relay)));
      continue;
    }
    // An end is unreachable and its relay reachable: the end dials (link_direction.hpp).
    mesh_->send(t->relay, relay->address, proto::MessageType::relay_data, std::move(t->body));
  }
  bool delivered = false;
  while (auto m = relayed_->poll_message()) {
    to_core(m->from, m->type, m->body);
    delivered = true;
  }
  while (auto l = relayed_->poll_lost()) {
    spdlog::info("the relayed link with peer {} ended: {}", secure::short_id(l->peer), l->why);
    core_->on_peer_lost(steady_now(), l->peer, l->why);
    delivered = true;
  }
  return delivered;
}

void SwarmSession::arm_timer() {
  const TimePoint deadline = std::min(core_->poll_timeout(), relayed_->poll_timeout());
  if (deadline == timer_at_) return;
  timer_at_ = deadline;
  timer_.cancel();
  if (deadline == kNever) return;
  timer_.expires_at(to_steady(deadline));
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (error) return;
    timer_at_ = kNever;
    relayed_->on_timer(steady_now());
    core_->on_timer(steady_now());
    drive();
  });
}

void SwarmSession::on_core_event(proto::PeerEvent& e) {
  using Kind = proto::PeerEvent::Kind;
  if (e.kind == Kind::note) {
    if (e.warning)
      spdlog::warn("{}", e.text);
    else
      spdlog::info("{}", e.text);
    return;
  }
  if (e.kind == Kind::refused) link_->stop();
  if (e.kind == Kind::mean) reach(FaultPoint::mean, e.round);
  compute_->on_core_event(e);
}

void SwarmSession::run(const round::NetworkSide::Command& command) {
  command(*compute_, steady_now());
  drive();
}

void SwarmSession::on_mesh_message(const proto::PeerKey& from, proto::MessageType type,
                                   std::span<const std::byte> body) {
  if (type == proto::MessageType::relay_data)
    on_relay_data(from, body);
  else
    to_core(from, type, body);
  drive();
}

void SwarmSession::on_relay_data(const proto::PeerKey& from, std::span<const std::byte> body) {
  try {
    if (config_.fault_point) reach(FaultPoint::relay, proto::decode_relay_data(body).header.round);
    const std::optional<proto::RelayData> data = core_->on_relay_data(from, body);
    if (data && core_->client().is_member(data->header.peer))
      relayed_->on_relay_data(steady_now(), from, *data);
    else if (data)
      relayed_dropped(
          fmt::format("relayed bytes from {} through {}, not a member in this peer's view",
                      secure::short_id(data->header.peer), secure::short_id(from)));
  } catch (const Error& e) {
    spdlog::warn("peer {}: {}; dropping it", secure::short_id(from), e.what());
    mesh_->drop(from);
  }
}

void SwarmSession::relayed_dropped(const std::string& what) {
  if (++relayed_drops_ > kLoggedRelayedDrops) return;
  spdlog::info(
      "{}: dropped{}", what,
      relayed_drops_ == kLoggedRelayedDrops ? " (the last such line; the count is at leave)" : "");
}

void SwarmSession::to_core(const proto::PeerKey& from, proto::MessageType type,
                           std::span<const std::byte> body) {
  try {
    if (proto::is_shard_message(type)) {  // the dataset's, not the core's (shard_service.hpp)
      shards_->on_message(from, type, body);
      return;
    }
    if (type == proto::MessageType::ring_chunk || type == proto::MessageType::all_gather_part) {
      const proto::PeerCore::CollectiveId id = proto::PeerCore::collective_id(type, body);
      reach(id.gather_phase ? FaultPoint::all_gather : FaultPoint::reduce_scatter, id.round);
    } else if (proto::is_state_request(type)) {
      reach(FaultPoint::serve, core_->served_round());
    }
    const std::shared_lock<std::shared_mutex> lock = compute_->guard_for(type);
    core_->on_peer_message(steady_now(), from, type, body);
  } catch (const Error& e) {
    spdlog::warn("peer {}: {}; dropping it", secure::short_id(from), e.what());
    mesh_->drop(from);
  }
}

ShardPeers SwarmSession::shard_peers() const {
  ShardPeers peers;
  if (!core_ || !core_->client().joined()) return peers;
  peers.shard_count = core_->client().membership().shard_count;
  peers.viewed = core_->client().view_changes() > 0;
  for (const proto::Member& m : core_->client().view().members)
    if (m.key != identity_.public_key()) peers.members.push_back(m);
  return peers;
}

std::uint64_t SwarmSession::ask_piece(const proto::PeerKey& peer,
                                      const proto::ShardRequest& request, ShardService::Done done) {
  if (!core_ || !core_->client().is_member(peer)) {
    done({.bytes = {}, .error = "not a member of this peer's view"});
    return 0;
  }
  const std::uint64_t id = shards_->ask(peer, request, std::move(done));
  drive();
  return id;
}

void SwarmSession::cancel_piece(std::uint64_t id) {
  if (shards_) shards_->cancel(id);
}

void SwarmSession::leave(const std::string& reason) {
  if (core_ && (core_->relay().bytes_relayed() > 0 || core_->relay().refused() > 0))
    spdlog::info("relayed {} bytes between unreachable members ({} relay_data refused)",
                 core_->relay().bytes_relayed(), core_->relay().refused());
  if (relayed_drops_ > 0)
    spdlog::info("dropped relayed bytes {} times: their end or relay was not in this peer's view",
                 relayed_drops_);
  if (compute_) compute_->leave(reason);
  if (link_) link_->stop();
  if (mesh_) mesh_->stop();
  if (router_port_) router_port_->stop();
  timer_.cancel();
}

void SwarmSession::reach(FaultPoint point, std::uint64_t round) const {
  if (config_.fault_point) config_.fault_point(point, round);
}

}  // namespace loco::swarm
