#pragma once
// A peer's connections to the other members of its run, for the collectives and state transfer.
// It listens for members (BundleListener; `accept` decides who may connect: the members of the
// current signed view), and connects to a member the first time it sends to it. Between two
// reachable members each direction has its own bundle: a peer sends on the bundle it opened and
// receives on the ones others opened, so messages from one sender arrive in the order sent. A
// member the others cannot reach dials, and the reachable one sends back on that bundle
// (`SendOn::their`, proto/link_direction.hpp), holding its messages until the bundle is there; so
// messages are read from every bundle, whoever opened it. Every bundle is shaped by the peer's
// own link settings (LinkShaper), so a local swarm behaves like peers on a WAN.
//
// A member's key may come back in a new process (restarted, its old one frozen or on a host that
// vanished with its connections open): the newest bundle a key opens replaces its older one, an
// answer goes back on the bundle the asker opened (proto::SendOn::asker), and the bundle this
// peer opened follows the member's address: a send to the address the view lists now, not the
// one it dialled, closes the old bundle and dials the new address (the tracker's signed view
// gives the address; only the key's holder can open a bundle for its key).
//
// The tracker's reachability probe (`prober`, its key) is a bundle from the tracker: welcomed,
// logged and closed, nothing more.
//
// Messages are whole (MessageAssembler with the table's peer_to_peer limits) and typed; a
// message that breaks the limits ends that bundle. on_lost(key) reports a member whose bundle in
// either direction ended, so the collective can abort.
//
// Keepalive: each direction's bundle is read by one end only, and a channel that hears nothing
// for its idle timeout ends. So every idle_timeout / 3 the mesh sends a keepalive on each bundle
// that carried nothing meanwhile: on its own outbound bundles, and back on the inbound ones (which
// carry nothing else). Keepalives are dropped on receipt.
// Threads: every call, and every callback, on the io_context's thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "loco/net/bundle_listener.hpp"
#include "loco/net/message_assembler.hpp"
#include "loco/proto/awaiting_links.hpp"
#include "loco/proto/link_direction.hpp"
#include "loco/proto/message_type.hpp"

namespace loco::net {

struct PeerMeshHandlers {
  std::function<void(const secure::PublicKey& from, proto::MessageType type,
                     std::span<const std::byte> body)>
      on_message;
  std::function<void(const secure::PublicKey& peer, const std::string& why)> on_lost;
};

struct PeerMeshConfig {
  ChannelSetup setup;  // identity and run; `accept` admits members only
  BundleConfig bundle;
  std::shared_ptr<LinkShaper> link;  // may be null: no link emulation
  ListenerLimits limits = ListenerLimits::peer_defaults();
  std::optional<secure::PublicKey> prober;  // the tracker, whose probes `accept` must admit
};

class PeerMesh : public std::enable_shared_from_this<PeerMesh> {
 public:
  static std::shared_ptr<PeerMesh> create(boost::asio::io_context& io,
                                          const boost::asio::ip::tcp::endpoint& listen,
                                          PeerMeshConfig config, PeerMeshHandlers handlers);

  void start();
  // Stops accepting and sending. Each outgoing bundle closes once the messages already sent on it
  // have been handed to its connections, which write them before their close frames: a member
  // that leaves right after its part of a collective still delivers that part. Incoming bundles
  // close once every outgoing one has (closing them first could make the other side give up on
  // this member before its last messages arrive).
  void stop();
  boost::asio::ip::tcp::endpoint local_endpoint() const { return listener_->local_endpoint(); }

  // Sends `body` to `peer` (proto::SendOn): on the bundle this peer opened (at `address`,
  // connecting first if needed, or again if the one it has goes to another address; "" keeps the
  // one there is), on the one `peer` opened once it is there, or, an answer, on the one `peer`
  // opened if it has one (else it is dropped). The bytes are kept alive until sent. False when
  // `address` does not resolve.
  bool send(const secure::PublicKey& peer, const std::string& address, proto::MessageType type,
            std::vector<std::byte> body, proto::SendOn on = proto::SendOn::own);
  // Ends the connections with `peer` in both directions (a suspect, a departed member).
  void drop(const secure::PublicKey& peer);

  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint64_t bytes_received() const { return bytes_received_; }

  struct Private;
  PeerMesh(Private, boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& listen,
           PeerMeshConfig config, PeerMeshHandlers handlers);

 private:
  using Queued = std::pair<proto::MessageType, std::shared_ptr<std::vector<std::byte>>>;
  struct Outbound {
    std::shared_ptr<StreamBundle> bundle;
    std::string address;   // dialled
    std::uint64_t id = 0;  // tells its callbacks from those of an earlier bundle to the same key
    MessageAssembler assembler;  // what the other side sends back on it
    bool sent_since_keepalive = false;
    std::size_t unsent = 0;  // messages handed to the bundle whose stripes are not all taken
    std::deque<Queued> waiting;
  };
  struct Inbound {
    std::shared_ptr<StreamBundle> bundle;
    MessageAssembler assembler;
  };

  BundleHandlers inbound_handlers(const std::shared_ptr<StreamBundle>& bundle);
  void on_inbound_ready(const std::shared_ptr<StreamBundle>& bundle);
  // A piece from `peer`'s bundle `assembler` reads: whole messages go to on_message.
  void on_piece(const secure::PublicKey& peer, MessageAssembler& assembler,
                const BundleChunk& piece);
  void send_on_their_link(const secure::PublicKey& peer, Queued message);
  void send_on(StreamBundle& bundle, Queued message);
  // The bundle to `peer` at `address`: the one there is, or a new one (which takes over what
  // waited for an earlier one to another address); nullptr when `address` does not resolve.
  Outbound* outbound_to(const secure::PublicKey& peer, const std::string& address);
  void connect(const secure::PublicKey& peer, const std::string& address,
               const boost::asio::ip::tcp::endpoint& endpoint);
  // The bundle `id` to `peer`, if it is still the current one.
  Outbound* current(const secure::PublicKey& peer, std::uint64_t id);
  void flush(Outbound& out);
  void on_sent(const secure::PublicKey& peer, std::uint64_t id);
  void close_inbound_once_outbound_closed();
  void lost(const secure::PublicKey& peer, const std::string& why);
  void arm_keepalive();
  void send_keepalives();

  boost::asio::io_context& io_;
  PeerMeshConfig config_;
  PeerMeshHandlers handlers_;
  std::shared_ptr<BundleListener> listener_;
  std::map<secure::PublicKey, Outbound> outbound_;
  std::map<secure::PublicKey, Inbound> inbound_;
  proto::AwaitingLinks<secure::PublicKey, Queued> awaiting_;  // for their bundle
  std::set<std::shared_ptr<StreamBundle>> probes_;            // the tracker's, until closed
  boost::asio::steady_timer keepalive_;
  std::uint64_t next_outbound_id_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t bytes_received_ = 0;
  bool stopped_ = false;
};

}  // namespace loco::net
