#include "serve.hpp"

#include <fmt/ostream.h>
#include <spdlog/spdlog.h>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <cstdio>
#include <set>

#include "loco/core/error.hpp"
#include "loco/net/bundle_listener.hpp"
#include "loco/net/host_port.hpp"
#include "loco/secure/identity.hpp"

namespace loco::tracker {
namespace {

constexpr auto kShutdownGrace = std::chrono::seconds(2);

// Ends every connection, and the service, on SIGINT or SIGTERM.
class Service {
 public:
  Service(boost::asio::io_context& io, const secure::KeyPair& key, const TrackerOptions& options,
          const boost::asio::ip::tcp::endpoint& endpoint)
      : io_(io), signals_(io, SIGINT, SIGTERM), grace_timer_(io) {
    net::BundleListenerConfig config{
        .setup = net::ChannelSetup{.identity = &key,
                                   .config = secure::ChannelConfig{.run_id = options.run_id},
                                   .accept = [](const secure::PublicKey&) { return true; },
                                   .peer_label = {}},
        .setup_timeout = std::chrono::seconds(10),
        .max_streams = 1,
        .link = nullptr,
    };
    listener_ = net::BundleListener::create(
        io, endpoint, std::move(config),
        [this](const std::shared_ptr<net::StreamBundle>& peer) { return admit(peer); });
  }

  void start() {
    listener_->start();
    signals_.async_wait([this](const boost::system::error_code& error, int signal) {
      if (!error) stop(signal);
    });
  }

  boost::asio::ip::tcp::endpoint local_endpoint() const { return listener_->local_endpoint(); }

 private:
  net::BundleHandlers admit(const std::shared_ptr<net::StreamBundle>& newcomer) {
    peers_.insert(newcomer);
    spdlog::info("{} connected ({} connected)", newcomer->peer_name(), peers_.size());
    const std::weak_ptr<net::StreamBundle> weak = newcomer;
    return net::BundleHandlers{
        .on_ready = {},
        .on_chunk =
            [weak](const net::BundleChunk& piece) {
              const auto peer = weak.lock();
              if (!peer || piece.offset != 0) return;
              spdlog::warn(
                  "{} sent a message of type {}; this tracker speaks no protocol above "
                  "the handshake yet: disconnecting it",
                  peer->peer_name(), piece.message_type);
              peer->close();
            },
        .on_closed =
            [this, weak](const Error* error) {
              const auto peer = weak.lock();
              if (!peer) return;
              peers_.erase(peer);
              spdlog::info("{} disconnected{}{} ({} connected)", peer->peer_name(),
                           error != nullptr ? ": " : "", error != nullptr ? error->what() : "",
                           peers_.size());
              if (stopping_ && peers_.empty()) io_.stop();
            },
    };
  }

  void stop(int signal) {
    spdlog::info("signal {}: closing {} connections and stopping", signal, peers_.size());
    stopping_ = true;
    listener_->stop();
    if (peers_.empty()) {
      io_.stop();
      return;
    }
    for (const auto& peer : std::set(peers_)) peer->close();  // on_closed may erase
    grace_timer_.expires_after(kShutdownGrace);               // for the close frames, no longer
    grace_timer_.async_wait([this](const boost::system::error_code&) { io_.stop(); });
  }

  boost::asio::io_context& io_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer grace_timer_;
  std::shared_ptr<net::BundleListener> listener_;
  std::set<std::shared_ptr<net::StreamBundle>> peers_;
  bool stopping_ = false;
};

}  // namespace

int serve(const TrackerOptions& options) {
  try {
    if (options.key_file.empty())
      throw Error(ErrorCategory::config,
                  "--tracker.key: no identity key file; make one with `loco-tracker keygen --out "
                  "tracker.key` and give its public key to the peers");
    if (options.run_id.empty())
      throw Error(ErrorCategory::config,
                  "--run.id: no run id; every peer of the run uses the same");
    net::HostPort address;
    try {
      address = net::parse_host_port(options.listen, /*allow_any_port=*/true);
    } catch (const Error& e) {
      throw Error(ErrorCategory::config, fmt::format("--tracker.listen: {}", e.message()));
    }
    const secure::KeyPair key = secure::read_key_file(options.key_file);
    boost::asio::io_context io;
    Service service(io, key, options, net::resolve(io, address));
    service.start();
    std::printf("listening on %s as %s\n",
                fmt::format("{}", fmt::streamed(service.local_endpoint())).c_str(),
                secure::to_hex(key.public_key()).c_str());
    std::fflush(stdout);
    io.run();
    return 0;
  } catch (const Error& e) {
    spdlog::error("loco-tracker: {}", e.what());
    return 1;
  }
}

}  // namespace loco::tracker
