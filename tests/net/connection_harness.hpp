#pragma once
// Two Connections over real loopback TCP sockets on one io_context, with what each side saw.

#include <boost/asio.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "loco/core/hash.hpp"
#include "loco/net/connection.hpp"

namespace loco::net::testing {

using boost::asio::ip::tcp;

// Runs `io` until `done` holds; false if `limit` passed first (a hang guard only).
template <typename Pred>
bool run_io_until(boost::asio::io_context& io, Pred done,
                  std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    io.run_one_for(std::chrono::milliseconds(50));
  }
  return true;
}

struct Side {
  secure::KeyPair key = secure::KeyPair::generate();
  secure::ChannelConfig config;
  secure::AcceptIdentity accept;  // default: the other side's key only
  std::unique_ptr<LinkPacer> pacer;
  std::shared_ptr<Connection> connection;

  bool established = false;
  bool ended = false;
  std::optional<Error> error;
  std::vector<std::pair<std::uint16_t, std::vector<std::byte>>> messages;  // small messages
  // Large messages are hashed as they stream in instead of being stored.
  std::uint64_t streamed_bytes = 0;
  std::uint64_t expected_offset = 0;
  bool hash_only = false;
  bool refuse_messages = false;  // the handler throws, as a protocol layer refusing a message
  Blake2b hasher;
  std::optional<Digest> streamed_digest;
  std::vector<std::byte> partial;

  Side() { config.run_id = "run-1"; }

  ConnectionHandlers handlers() {
    return ConnectionHandlers{
        .on_established = [this] { established = true; },
        .on_chunk = [this](const secure::ChannelEvent& chunk) { on_chunk(chunk); },
        .on_closed =
            [this](const Error* e) {
              ended = true;
              if (e != nullptr) error = *e;
            },
    };
  }

  void on_chunk(const secure::ChannelEvent& chunk) {
    if (refuse_messages)
      throw Error(ErrorCategory::protocol,
                  "refuses a message of type " + std::to_string(chunk.message_type));
    if (hash_only) {
      EXPECT_EQ(chunk.offset, expected_offset);
      expected_offset = chunk.offset + chunk.data.size();
      hasher.update(chunk.data);
      streamed_bytes += chunk.data.size();
      if (chunk.last_chunk()) streamed_digest = hasher.finish();
      return;
    }
    partial.insert(partial.end(), chunk.data.begin(), chunk.data.end());
    if (chunk.last_chunk()) {
      messages.emplace_back(chunk.message_type, std::move(partial));
      partial.clear();
    }
  }
};

class LoopbackPair {
 public:
  boost::asio::io_context io;
  tcp::acceptor acceptor{io, {boost::asio::ip::address_v4::loopback(), 0}};
  Side client;  // initiator
  Side server;  // responder

  // Connects the client to `via` (default: the server's listening socket) and starts both ends.
  void connect(std::optional<tcp::endpoint> via = std::nullopt) {
    tcp::socket client_socket(io);
    client_socket.connect(via.value_or(acceptor.local_endpoint()));
    if (via) io.run_for(std::chrono::milliseconds(20));  // let a relay accept and connect on
    tcp::socket server_socket = acceptor.accept();
    start(client, secure::Role::initiator, std::move(client_socket), server.key.public_key(),
          "server");
    start(server, secure::Role::responder, std::move(server_socket), client.key.public_key(),
          "client");
  }

  template <typename Pred>
  bool run_until(Pred done) {
    return run_io_until(io, done);
  }

 private:
  void start(Side& side, secure::Role role, tcp::socket socket, secure::PublicKey other,
             std::string label) {
    if (!side.accept) side.accept = [other](const secure::PublicKey& k) { return k == other; };
    auto channel = std::make_unique<secure::SecureChannel>(role, side.key, side.config, side.accept,
                                                           std::move(label), steady_now(),
                                                           secure::fresh_ephemeral_seed());
    side.connection = Connection::create(std::move(socket), std::move(channel), side.handlers(),
                                         std::move(side.pacer));
    side.connection->start();
  }
};

}  // namespace loco::net::testing
