#include "loco/net/peer_mesh.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "loco/net/host_port.hpp"
#include "loco/proto/link_direction.hpp"

namespace loco::net {
namespace {

std::optional<std::uint64_t> peer_message_limit(std::uint16_t type) {
  const auto info = proto::message_info(type);
  if (!info || info->route != proto::Route::peer_to_peer) return std::nullopt;
  return info->max_bytes;
}

// The keepalive message: its version byte alone.
std::vector<std::byte> keepalive_body() {
  return {std::byte{proto::info(proto::MessageType::keepalive).version}};
}

}  // namespace

struct PeerMesh::Private {};

std::shared_ptr<PeerMesh> PeerMesh::create(boost::asio::io_context& io,
                                           const boost::asio::ip::tcp::endpoint& listen,
                                           PeerMeshConfig config, PeerMeshHandlers handlers) {
  return std::make_shared<PeerMesh>(Private{}, io, listen, std::move(config), std::move(handlers));
}

PeerMesh::PeerMesh(Private, boost::asio::io_context& io,
                   const boost::asio::ip::tcp::endpoint& listen, PeerMeshConfig config,
                   PeerMeshHandlers handlers)
    : io_(io), config_(std::move(config)), handlers_(std::move(handlers)), keepalive_(io) {
  BundleListenerConfig listener{.setup = config_.setup,
                                .limits = config_.limits,
                                .max_streams = kMaxStreams,
                                .link = config_.link};
  listener_ =
      BundleListener::create(io, listen, std::move(listener),
                             [this](const std::shared_ptr<StreamBundle>& bundle,
                                    const std::string&) { return inbound_handlers(bundle); });
}

void PeerMesh::start() {
  listener_->start();
  arm_keepalive();
}

void PeerMesh::stop() {
  stopped_ = true;
  keepalive_.cancel();
  listener_->stop();
  for (auto& [key, out] : outbound_)
    if (out.unsent == 0) out.bundle->close();
  close_inbound_once_outbound_closed();
}

void PeerMesh::close_inbound_once_outbound_closed() {
  if (!stopped_ || !outbound_.empty()) return;
  for (auto& [key, in] : inbound_) in.bundle->close();
}

void PeerMesh::on_sent(const secure::PublicKey& peer, std::uint64_t id) {
  Outbound* out = current(peer, id);
  if (out == nullptr) return;  // dropped or replaced meanwhile
  if (--out->unsent == 0 && stopped_) out->bundle->close();
}

PeerMesh::Outbound* PeerMesh::current(const secure::PublicKey& peer, std::uint64_t id) {
  const auto it = outbound_.find(peer);
  return it != outbound_.end() && it->second.id == id ? &it->second : nullptr;
}

BundleHandlers PeerMesh::inbound_handlers(const std::shared_ptr<StreamBundle>& bundle) {
  const std::weak_ptr<StreamBundle> weak = bundle;
  const std::weak_ptr<PeerMesh> self = weak_from_this();
  return BundleHandlers{
      .on_ready =
          [self, weak] {
            auto mesh = self.lock();
            auto b = weak.lock();
            if (mesh && b) mesh->on_inbound_ready(b);
          },
      .on_chunk =
          [self, weak](const BundleChunk& piece) {
            auto mesh = self.lock();
            auto b = weak.lock();
            if (!mesh || !b) return;
            const auto it = mesh->inbound_.find(b->peer_identity());
            if (it == mesh->inbound_.end() || it->second.bundle != b) return;
            mesh->on_piece(b->peer_identity(), it->second.assembler, piece);
          },
      .on_closed =
          [self, weak](const Error* error) {
            auto mesh = self.lock();
            auto b = weak.lock();
            if (!mesh || !b || mesh->probes_.erase(b) > 0 || !b->ready()) return;
            const auto it = mesh->inbound_.find(b->peer_identity());
            if (it == mesh->inbound_.end() || it->second.bundle != b) return;
            mesh->inbound_.erase(it);
            mesh->lost(b->peer_identity(), error != nullptr ? error->what() : "it closed");
          },
  };
}

void PeerMesh::on_inbound_ready(const std::shared_ptr<StreamBundle>& b) {
  const secure::PublicKey peer = b->peer_identity();
  if (config_.prober && peer == *config_.prober) {
    spdlog::debug("the tracker's reachability probe reached this peer at its address");
    probes_.insert(b);
    b->close();
    return;
  }
  if (auto old = inbound_.find(peer); old != inbound_.end())
    old->second.bundle->close();  // the member reconnected
  inbound_.insert_or_assign(
      peer, Inbound{.bundle = b,
                    .assembler =
                        MessageAssembler(peer_message_limit, config_.limits.max_buffered_bytes)});
  // What waited for this member to dial goes out now, in order.
  for (Queued& message : awaiting_.release(peer)) send_on_their_link(peer, std::move(message));
}

void PeerMesh::on_piece(const secure::PublicKey& peer, MessageAssembler& assembler,
                        const BundleChunk& piece) {
  bytes_received_ += piece.data.size();
  // Throws for a message over its limit: the bundle fails with that error.
  auto whole = assembler.add(piece);
  if (whole && whole->type != static_cast<std::uint16_t>(proto::MessageType::keepalive))
    handlers_.on_message(peer, static_cast<proto::MessageType>(whole->type), whole->bytes);
}

void PeerMesh::send_on_their_link(const secure::PublicKey& peer, Queued message) {
  const auto in = inbound_.find(peer);
  if (in == inbound_.end() || !in->second.bundle->ready()) {
    const std::size_t bytes = message.second->size();
    if (const auto overflow = awaiting_.hold(peer, std::move(message), bytes))
      lost(peer,
           fmt::format("it did not connect to this peer ({} messages, {} bytes waited for it)",
                       overflow->messages, overflow->bytes));
    return;
  }
  send_on(*in->second.bundle, std::move(message));
}

void PeerMesh::send_on(StreamBundle& bundle, Queued message) {
  auto [type, body] = std::move(message);
  bytes_sent_ += body->size();
  bundle.send(static_cast<std::uint16_t>(type), *body, [body] {});
}

bool PeerMesh::send(const secure::PublicKey& peer, const std::string& address,
                    proto::MessageType type, std::vector<std::byte> body, proto::SendOn on) {
  if (stopped_) return false;
  Queued message(type, std::make_shared<std::vector<std::byte>>(std::move(body)));
  if (on == proto::SendOn::their) {
    send_on_their_link(peer, std::move(message));
    return true;
  }
  if (on == proto::SendOn::asker) {
    // Its request came on the newest bundle its key opened. None: the asker went away (it asks
    // again on its next one), and nothing is held for it.
    if (const auto in = inbound_.find(peer); in != inbound_.end() && in->second.bundle->ready())
      send_on(*in->second.bundle, std::move(message));
    return true;
  }
  Outbound* out = outbound_to(peer, address);
  if (out == nullptr) return false;
  out->waiting.push_back(std::move(message));
  flush(*out);
  return true;
}

PeerMesh::Outbound* PeerMesh::outbound_to(const secure::PublicKey& peer,
                                          const std::string& address) {
  // No address: a member the view no longer lists, whose round may still be on (the bundle
  // there is serves it).
  const auto it = outbound_.find(peer);
  if (it != outbound_.end() && (address.empty() || it->second.address == address))
    return &it->second;
  boost::asio::ip::tcp::endpoint endpoint;
  try {
    endpoint = resolve(io_, parse_host_port(address));
  } catch (const Error& e) {
    spdlog::warn("peer {} at {}: {}", secure::short_id(peer), address, e.what());
    return nullptr;
  }
  std::deque<Queued> waiting;
  if (it != outbound_.end()) {
    // The view lists the member elsewhere: it joined again from a new process, and the old one
    // (frozen, or on a host that vanished) may never read again. What went to it belonged to
    // rounds its new join aborted; what still waits goes to the new address. Dropping the old
    // bundle closes its sockets without callbacks.
    spdlog::info("peer {} now listens at {}, not {}: its link there is closed",
                 secure::short_id(peer), address, it->second.address);
    waiting = std::move(it->second.waiting);
    outbound_.erase(it);
  }
  connect(peer, address, endpoint);
  Outbound& out = outbound_.at(peer);
  out.waiting = std::move(waiting);
  return &out;
}

void PeerMesh::connect(const secure::PublicKey& peer, const std::string& address,
                       const boost::asio::ip::tcp::endpoint& endpoint) {
  ChannelSetup setup = config_.setup;
  setup.accept = [peer](const secure::PublicKey& k) { return k == peer; };
  setup.peer_label = fmt::format("peer {}", secure::short_id(peer));
  const std::weak_ptr<PeerMesh> self = weak_from_this();
  const std::uint64_t id = ++next_outbound_id_;
  auto bundle = StreamBundle::connect(
      io_, endpoint, config_.bundle, std::move(setup),
      BundleHandlers{
          .on_ready =
              [self, peer, id] {
                auto mesh = self.lock();
                if (!mesh) return;
                if (Outbound* out = mesh->current(peer, id)) mesh->flush(*out);
              },
          .on_chunk =
              [self, peer, id](const BundleChunk& piece) {
                auto mesh = self.lock();
                if (!mesh) return;
                // What a reachable member sends back on the bundle this peer dialled.
                if (Outbound* out = mesh->current(peer, id))
                  mesh->on_piece(peer, out->assembler, piece);
              },
          .on_closed =
              [self, peer, id](const Error* error) {
                auto mesh = self.lock();
                if (!mesh || mesh->current(peer, id) == nullptr) return;
                mesh->outbound_.erase(peer);
                mesh->lost(peer, error != nullptr ? error->what() : "it closed");
                mesh->close_inbound_once_outbound_closed();
              },
      },
      config_.link);
  outbound_.insert_or_assign(
      peer,
      Outbound{.bundle = std::move(bundle),
               .address = address,
               .id = id,
               .assembler = MessageAssembler(peer_message_limit, config_.limits.max_buffered_bytes),
               .waiting = {}});
}

void PeerMesh::flush(Outbound& out) {
  if (!out.bundle->ready()) return;
  while (!out.waiting.empty()) {
    auto [type, body] = std::move(out.waiting.front());
    out.waiting.pop_front();
    bytes_sent_ += body->size();
    out.sent_since_keepalive = true;
    ++out.unsent;
    if (!out.bundle->send(
            static_cast<std::uint16_t>(type), *body,
            [body, self = weak_from_this(), peer = out.bundle->peer_identity(), id = out.id] {
              if (auto mesh = self.lock()) mesh->on_sent(peer, id);
            }))
      --out.unsent;  // the bundle is closing: its callback never runs
  }
}

void PeerMesh::drop(const secure::PublicKey& peer) {
  // Dropping the bundles closes their sockets at once, without callbacks.
  outbound_.erase(peer);
  inbound_.erase(peer);
  awaiting_.forget(peer);
  close_inbound_once_outbound_closed();
}

void PeerMesh::arm_keepalive() {
  keepalive_.expires_after(config_.setup.config.idle_timeout / 3);
  keepalive_.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (error || !self || self->stopped_) return;
    self->send_keepalives();
    self->arm_keepalive();
  });
}

void PeerMesh::send_keepalives() {
  const auto body = std::make_shared<const std::vector<std::byte>>(keepalive_body());
  const auto send = [&](StreamBundle& bundle) {
    if (bundle.ready())
      bundle.send(static_cast<std::uint16_t>(proto::MessageType::keepalive), *body, [body] {});
  };
  for (auto& [key, out] : outbound_) {
    // Its own messages wait in `waiting` until the bundle is ready: a keepalive would pass them.
    if (!out.sent_since_keepalive && out.waiting.empty()) send(*out.bundle);
    out.sent_since_keepalive = false;
  }
  for (auto& [key, in] : inbound_) send(*in.bundle);
}

void PeerMesh::lost(const secure::PublicKey& peer, const std::string& why) {
  if (!stopped_ && handlers_.on_lost) handlers_.on_lost(peer, why);
}

}  // namespace loco::net
