#pragma once
// One connection of loco-member-attacker to the tracker: what net::TrackerLink does for a peer
// (a one-stream bundle, the tracker's key pinned, whole messages into a proto::TrackerClient, its
// transmissions and timer), without reconnecting on its own, so that the attacker sees the tracker
// cut it off (on_cut) and decides whether to connect again; and with raw(), which sends any body
// under any type, as no client encodes it. Without a client, the connection only sets up and
// waits (a connection that never joins).
// Threads: every call, and every callback, on the io_context's thread.

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>

#include "loco/net/message_assembler.hpp"
#include "loco/net/stream_bundle.hpp"
#include "loco/proto/tracker_client.hpp"

namespace loco::test {

class TrackerConnection {
 public:
  struct Handlers {
    std::function<void()> on_ready;  // set up (the bundle welcomed); the client has sent its join
    std::function<void(const proto::ClientEvent& event)> on_event;
    std::function<void()> on_cut;  // the connection ended
  };

  // `client` (may be null) and setup.identity outlive the connection.
  TrackerConnection(boost::asio::io_context& io, boost::asio::ip::tcp::endpoint tracker,
                    net::ChannelSetup setup, proto::TrackerClient* client, Handlers handlers)
      : io_(io),
        tracker_(tracker),
        setup_(std::move(setup)),
        client_(client),
        handlers_(std::move(handlers)),
        assembler_(limit, kMaxBufferedBytes),
        timer_(io) {}

  void connect() {
    assembler_ = net::MessageAssembler(limit, kMaxBufferedBytes);
    bundle_ = net::StreamBundle::connect(
        io_, tracker_, net::BundleConfig{}, setup_,
        net::BundleHandlers{.on_ready = [this] { on_ready(); },
                            .on_chunk = [this](const net::BundleChunk& piece) { on_piece(piece); },
                            .on_closed = [this](const Error* error) { on_closed(error); }});
  }

  bool connected() const { return bundle_ != nullptr && bundle_->ready(); }

  // Sends what the client has queued.
  void flush() {
    if (client_ == nullptr) return;
    while (auto out = client_->poll_transmit()) raw(out->type, std::move(out->body), {});
  }

  // Sends `body` as a message of `type`; `on_sent` once the connection has taken it. False (and
  // never on_sent) when not connected.
  bool raw(proto::MessageType type, std::vector<std::byte> body, std::function<void()> on_sent) {
    if (!connected()) return false;
    auto bytes = std::make_shared<std::vector<std::byte>>(std::move(body));
    return bundle_->send(static_cast<std::uint16_t>(type), *bytes,
                         [bytes, on_sent = std::move(on_sent)] {
                           if (on_sent) on_sent();
                         });
  }

 private:
  // The tracker sends one message at a time on one stream (net::TrackerLink's cap).
  static constexpr std::uint64_t kMaxBufferedBytes = std::uint64_t{4} << 20;
  static std::optional<std::uint64_t> limit(std::uint16_t type) {
    const auto info = proto::message_info(type);
    if (!info || info->route != proto::Route::tracker_to_peer) return std::nullopt;
    return info->max_bytes;
  }

  void on_ready() {
    if (client_ != nullptr) client_->on_connected(steady_now());
    if (handlers_.on_ready) handlers_.on_ready();
    drive();
  }

  void on_piece(const net::BundleChunk& piece) {
    auto whole = assembler_.add(piece);  // throws for an oversized message: the bundle fails
    if (!whole || client_ == nullptr) return;
    client_->on_message(steady_now(), whole->type, whole->bytes);
    drive();
  }

  void on_closed(const Error* error) {
    spdlog::info("the tracker connection ended: {}",
                 error != nullptr ? error->what() : "closed by the tracker");
    bundle_.reset();
    timer_.cancel();
    if (client_ != nullptr) client_->on_disconnect(steady_now());
    if (handlers_.on_cut) handlers_.on_cut();
  }

  void drive() {
    if (client_ == nullptr) return;
    while (auto event = client_->poll_event()) handlers_.on_event(*event);
    flush();
    const TimePoint deadline = client_->poll_timeout();
    if (deadline == kNever || !connected()) return;
    timer_.expires_at(to_steady(deadline));
    timer_.async_wait([this](const boost::system::error_code& error) {
      if (error || client_ == nullptr || !connected()) return;
      client_->on_timer(steady_now());
      drive();
    });
  }

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::endpoint tracker_;
  net::ChannelSetup setup_;
  proto::TrackerClient* client_;
  Handlers handlers_;
  net::MessageAssembler assembler_;
  boost::asio::steady_timer timer_;
  std::shared_ptr<net::StreamBundle> bundle_;
};

}  // namespace loco::test
