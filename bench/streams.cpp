// streams: what parallel TCP streams per peer pair buy on a long link whose single flow is held
// to its window (net/stream_bundle.hpp). A 16 MiB message goes through a bundle of 1, 2, 4 and
// 8 streams over loopback with link emulation: 20 ms one way, a 256 KiB window per stream, and
// 200 Mbit/s of upload. One stream can carry at most 256 KiB per 40 ms round trip
// (52.4 Mbit/s), N streams N times that, up to the upload rate. Each figure is printed beside
// that bound.
//
// Last line: streams: s1_mbit_s=… s2_mbit_s=… s4_mbit_s=… s8_mbit_s=… s4_vs_bound=…

#include <algorithm>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "loco/net/bundle_listener.hpp"
#include "loco/net/stream_bundle.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMessageBytes = std::size_t{16} << 20;
constexpr std::uint64_t kWindowBytes = 256 << 10;
constexpr auto kLatency = 20ms;
constexpr loco::net::BitRate kUpload = 200'000'000;

double bound_mbit_s(std::uint32_t streams) {
  const double per_stream = static_cast<double>(kWindowBytes) * 8 /
                            std::chrono::duration<double>(2 * kLatency).count() / 1e6;
  return std::min(streams * per_stream, static_cast<double>(kUpload) / 1e6);
}

double bundle_mbit_s(std::uint32_t streams) {
  boost::asio::io_context io;
  const auto client_key = loco::secure::KeyPair::generate();
  const auto server_key = loco::secure::KeyPair::generate();
  auto setup = [](const loco::secure::KeyPair& key, const loco::secure::PublicKey& other) {
    return loco::net::ChannelSetup{
        .identity = &key,
        .config = loco::secure::ChannelConfig{.run_id = "bench"},
        .accept = [other](const loco::secure::PublicKey& k) { return k == other; },
        .peer_label = "bench"};
  };
  Clock::time_point done{};
  std::shared_ptr<loco::net::StreamBundle> server;  // a bundle lives while someone holds it
  auto listener = loco::net::BundleListener::create(
      io, {boost::asio::ip::address_v4::loopback(), 0},
      loco::net::BundleListenerConfig{.setup = setup(server_key, client_key.public_key()),
                                      .limits = loco::net::ListenerLimits::peer_defaults(),
                                      .max_streams = loco::net::kMaxStreams,
                                      .link = nullptr},
      [&](const std::shared_ptr<loco::net::StreamBundle>& bundle, const std::string&) {
        server = bundle;
        return loco::net::BundleHandlers{.on_ready = {},
                                         .on_chunk =
                                             [&](const loco::net::BundleChunk& piece) {
                                               if (piece.completes_message) done = Clock::now();
                                             },
                                         .on_closed = {}};
      });
  listener->start();

  loco::net::LinkSettings settings;
  settings.upload = kUpload;
  settings.latency = kLatency;
  settings.stream_window = kWindowBytes;
  auto link = loco::net::LinkShaper::create(settings, loco::from_steady(Clock::now()));
  const std::vector<std::byte> message(kMessageBytes, std::byte{5});
  bool ready = false;
  bool finished = false;
  auto client = loco::net::StreamBundle::connect(
      io, listener->local_endpoint(), {.streams = streams, .unit_bytes = 256 << 10},
      setup(client_key, server_key.public_key()),
      {.on_ready = [&] { ready = true; },
       .on_chunk = {},
       .on_closed =
           [&](const loco::Error* error) {
             if (finished) return;
             std::fprintf(stderr, "the bundle closed early: %s\n",
                          error != nullptr ? error->what() : "by the other end");
             std::exit(1);
           }},
      link);
  while (!ready) io.run_one();
  const auto start = Clock::now();
  client->send(1, message);
  while (done == Clock::time_point{}) io.run_one();
  const double seconds = std::chrono::duration<double>(done - start).count();
  finished = true;
  client->close();
  listener->stop();
  io.run_for(1s);
  return static_cast<double>(kMessageBytes) * 8 / seconds / 1e6;
}

}  // namespace

int main() {
  std::vector<double> rates;
  for (const std::uint32_t streams : {1u, 2u, 4u, 8u}) {
    const double rate = bundle_mbit_s(streams);
    rates.push_back(rate);
    std::printf("%u streams: %.1f Mbit/s, bound %.1f Mbit/s (%.1f%%)\n", streams, rate,
                bound_mbit_s(streams), 100 * rate / bound_mbit_s(streams));
  }
  std::printf(
      "streams: s1_mbit_s=%.1f s2_mbit_s=%.1f s4_mbit_s=%.1f s8_mbit_s=%.1f "
      "s4_vs_bound=%.3f\n",
      rates[0], rates[1], rates[2], rates[3], rates[2] / bound_mbit_s(4));
  return 0;
}
