// loco-test-peer: a minimal peer for the tracker's integration tests, until loco-peer trains in
// a swarm. It speaks the whole tracker protocol over the real network stack (net::TrackerLink,
// proto::TrackerClient) with a stand-in for training: its "state" is a hash chain, so every peer
// that applies the same rounds holds the same hash.
//
//   loco-test-peer --key FILE --tracker HOST:PORT --tracker-key HEX --run-id ID
//                  --run-config FILE [--token T] [--train-ms N] [--listen HOST:PORT]
//
// It listens on --listen (default 127.0.0.1, any port) for the tracker's reachability probe only,
// and registers that address: it has no peer-to-peer side, but it is as reachable as a loco-peer.
//
// One line on stdout per thing a test waits for:
//   joined shard I of N | refused REASON | group ROUND ATTEMPT SIZE | committed ROUND HASH12
//   | aborted ROUND ATTEMPT | resynced ROUND HASH12 | left
// SIGTERM: leave the run and exit 0.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <set>

#include "loco/cli/train_options.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/log.hpp"
#include "loco/net/bundle_listener.hpp"
#include "loco/net/host_port.hpp"
#include "loco/net/tracker_link.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/run_settings.hpp"

namespace {

using namespace loco;

struct Options {
  std::string key_file, tracker, tracker_key, run_id, run_config, token;
  std::string listen = "127.0.0.1:0";
  int train_ms = 200;
};

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// The stand-in for training and averaging: the state after round r is H(state before ‖ r).
Digest next_state(const Digest& state, std::uint64_t round) {
  Blake2b h;
  h.update(std::as_bytes(std::span(state)));
  h.update_u64(round);
  return h.finish();
}

class TestPeer {
 public:
  TestPeer(boost::asio::io_context& io, const Options& o, const secure::KeyPair& key)
      : io_(io), o_(o), train_timer_(io), probes_(probe_listener(io, o, key)), client_(config(o)) {
    probes_->start();
    state_ = client_config_.join.genesis;
    link_ = net::TrackerLink::create(
        io, {net::resolve(io, net::parse_host_port(o.tracker))},
        net::ChannelSetup{.identity = &key,
                          .config = secure::ChannelConfig{.run_id = o.run_id},
                          .accept = [pin = client_config_.tracker_key](
                                        const secure::PublicKey& k) { return k == pin; },
                          .peer_label = "the tracker"},
        client_, [this](const proto::ClientEvent& e) { on_event(e); });
  }

  void start() { link_->start(); }
  void leave() {
    client_.leave("stopped by a signal");
    link_->stop();
    probes_->stop();
    say("left");
  }

 private:
  proto::TrackerClientConfig config(const Options& o) {
    client_config_.run_id = o.run_id;
    client_config_.tracker_key = secure::parse_public_key(o.tracker_key);
    proto::JoinRequest& j = client_config_.join;
    j.software = "loco-test-peer";
    j.listen_address = fmt::format("{}:{}", probes_->local_endpoint().address().to_string(),
                                   probes_->local_endpoint().port());
    j.upload_bps = 100'000'000;
    j.credential = o.token;
    const train::TrainConfig run = cli::load_train_config(o.run_config);
    j.settings = train::run_settings(run);
    j.genesis = train::genesis_state(run).hash();
    j.state_hash = j.genesis;
    return client_config_;
  }

  void on_event(const proto::ClientEvent& e) {
    using Kind = proto::ClientEvent::Kind;
    switch (e.kind) {
      case Kind::joined:
        say(fmt::format("joined shard {} of {}", e.reply.shard_index, e.reply.shard_count));
        train();
        break;
      case Kind::refused:
        say("refused " + e.text);
        io_.stop();
        break;
      case Kind::group:
        say(fmt::format("group {} {} {}", e.group.round, e.group.attempt, e.group.members.size()));
        pending_ = next_state(state_, e.group.round);
        client_.round_done(
            {.round = e.group.round, .attempt = e.group.attempt, .state_hash = pending_});
        link_->flush();
        break;
      case Kind::commit:
        state_ = e.commit.state_hash;
        round_ = e.commit.round;
        client_.set_state(round_, state_);
        say(fmt::format("committed {} {}", round_, to_hex(state_).substr(0, 12)));
        train();
        break;
      case Kind::abort_round:
        say(fmt::format("aborted {} {}", e.abort.round, e.abort.attempt));
        if (!e.abort.retry) train();
        break;
      case Kind::resync:
        // Fetching the state is the swarm's part; the stand-in takes the hash it is told.
        state_ = e.resync.state_hash;
        round_ = e.resync.round;
        client_.set_state(round_, state_);
        client_.state_report();
        link_->flush();
        say(fmt::format("resynced {} {}", round_, to_hex(state_).substr(0, 12)));
        train();
        break;
      default: break;
    }
  }

  // A few milliseconds of "inner steps", then ready for the next round.
  void train() {
    train_timer_.expires_after(std::chrono::milliseconds(o_.train_ms));
    train_timer_.async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      client_.ready({.round = round_ + 1, .update_norm = 1.0f, .base_hash = state_});
      link_->flush();
    });
  }

  // Welcomes the tracker's probe and lets it go: nobody else may connect.
  std::shared_ptr<net::BundleListener> probe_listener(boost::asio::io_context& io, const Options& o,
                                                      const secure::KeyPair& key) {
    const secure::PublicKey pin = secure::parse_public_key(o.tracker_key);
    return net::BundleListener::create(
        io, net::resolve(io, net::parse_host_port(o.listen, /*allow_any_port=*/true)),
        net::BundleListenerConfig{
            .setup =
                net::ChannelSetup{.identity = &key,
                                  .config = secure::ChannelConfig{.run_id = o.run_id},
                                  .accept = [pin](const secure::PublicKey& k) { return k == pin; },
                                  .peer_label = {}},
            .limits = net::ListenerLimits::peer_defaults(),
            .max_streams = net::kMaxStreams,
            .link = nullptr},
        [this](const std::shared_ptr<net::StreamBundle>& bundle, const std::string&) {
          const std::weak_ptr<net::StreamBundle> weak = bundle;
          return net::BundleHandlers{
              .on_ready =
                  [this, weak] {
                    if (auto b = weak.lock()) {
                      probed_.insert(b);
                      b->close();
                    }
                  },
              .on_chunk = [](const net::BundleChunk&) {},
              .on_closed =
                  [this, weak](const Error*) {
                    if (auto b = weak.lock()) probed_.erase(b);
                  },
          };
        });
  }

  boost::asio::io_context& io_;
  const Options& o_;
  boost::asio::steady_timer train_timer_;
  std::shared_ptr<net::BundleListener> probes_;
  std::set<std::shared_ptr<net::StreamBundle>> probed_;  // welcomed, until closed
  proto::TrackerClientConfig client_config_;
  proto::TrackerClient client_;
  std::shared_ptr<net::TrackerLink> link_;
  Digest state_{};
  Digest pending_{};
  std::uint64_t round_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loco-test-peer: a minimal peer for tracker tests"};
  Options o;
  app.add_option("--key", o.key_file)->required();
  app.add_option("--tracker", o.tracker)->required();
  app.add_option("--tracker-key", o.tracker_key)->required();
  app.add_option("--run-id", o.run_id)->required();
  app.add_option("--run-config", o.run_config)->required();
  app.add_option("--token", o.token);
  app.add_option("--listen", o.listen);
  app.add_option("--train-ms", o.train_ms);
  CLI11_PARSE(app, argc, argv);
  loco::init_logging("info", "text");
  try {
    const auto key = loco::secure::read_key_file(o.key_file, loco::secure::KeyOwner::peer);
    boost::asio::io_context io;
    TestPeer peer(io, o, key);
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    boost::asio::steady_timer grace(io);
    signals.async_wait([&](const boost::system::error_code& error, int) {
      if (error) return;
      peer.leave();
      grace.expires_after(std::chrono::milliseconds(500));  // let the leave message out
      grace.async_wait([&](const boost::system::error_code&) { io.stop(); });
    });
    peer.start();
    io.run();
    return 0;
  } catch (const loco::Error& e) {
    spdlog::error("loco-test-peer: {}", e.what());
    return 1;
  }
}
