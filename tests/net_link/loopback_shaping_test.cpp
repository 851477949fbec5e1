// The link shaper over real TCP sockets on loopback (Boost.Asio, one thread). On real sockets only
// lower bounds are asserted (the pacer never releases early; a loaded machine only makes things
// later), never how close to the ideal a run comes: that is measured by `bench/run.sh transport`
// (shaped_rate_error_pct, shaped_latency_error_ms). The exact times are asserted in virtual time
// in link_shaper_test.cpp and stream_window_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "link_test_units.hpp"
#include "loco/net/link_shaper.hpp"
#include "paced_socket.hpp"

namespace loco::net {
namespace {

using namespace test_units;

using namespace std::chrono_literals;
using test::asio::io_context;

// 16 MiB (1.34 s at 100 Mbit/s) keeps the suite fast; LOCO_LINK_TRANSFER_MIB=64 measures the
// issue's 64 MiB for docs/LINK_EMULATION.md.
std::uint64_t transfer_bytes() {
  const char* mib = std::getenv("LOCO_LINK_TRANSFER_MIB");
  return (mib != nullptr ? std::strtoull(mib, nullptr, 10) : 16) * 1024 * 1024;
}
const std::uint64_t kTransferBytes = transfer_bytes();
const Duration kIdealAt100Mbit(static_cast<std::int64_t>(kTransferBytes) * 80);  // 8 bit / 1e8

double in_seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

// Runs one transfer of kTransferBytes from client to server through the two pacers; returns the
// time from the start until the server read the last byte, and prints it beside the ideal.
Duration timed_transfer(const char* what, LinkPacer& upload, LinkPacer* download) {
  io_context io;
  auto [client, server] = test::loopback_pair(io);
  TimePoint finished = kNever;
  test::PacedReceiver receiver(server, download, [&](TimePoint t) { finished = t; });
  test::PacedSender sender(client, upload, 64 * 1024, 1024 * 1024);  // 84 ms ahead
  const TimePoint start = test::now();
  receiver.start(kTransferBytes);
  sender.start(kTransferBytes);
  io.run();
  EXPECT_EQ(receiver.mismatches(), 0u);
  const Duration took = finished - start;
  std::printf("%s %llu MiB at 100Mbit: %.4f s, ideal %.4f s, error %+.2f%%\n", what,
              static_cast<unsigned long long>(kTransferBytes >> 20), in_seconds(took),
              in_seconds(kIdealAt100Mbit),
              100.0 * (in_seconds(took) / in_seconds(kIdealAt100Mbit) - 1.0));
  return took;
}

std::unique_ptr<LinkPacer> pacer_for(const LinkSettings& settings, std::uint64_t seed) {
  return LinkShaper::create(settings, test::now())->make_pacer(seed);
}

TEST(LoopbackShaping, UploadAt100MbitTakesTheIdealTime) {
  LinkSettings s;
  s.upload = k100Mbit;
  const Duration took = timed_transfer("upload", *pacer_for(s, 1), nullptr);
  EXPECT_GE(in_seconds(took), 0.95 * in_seconds(kIdealAt100Mbit));
}

TEST(LoopbackShaping, DownloadAt100MbitTakesTheIdealTime) {
  LinkSettings s;
  s.download = k100Mbit;
  const Duration took =
      timed_transfer("download", *pacer_for(LinkSettings{}, 1), pacer_for(s, 2).get());
  EXPECT_GE(in_seconds(took), 0.95 * in_seconds(kIdealAt100Mbit));
}

Duration fastest(const std::vector<Duration>& values) {
  return *std::min_element(values.begin(), values.end());
}

Duration median(std::vector<Duration> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Ping-pong over two 40 ms links (each side's link delays what it sends). The message carries
// its send time, so each direction's one-way delay is measured on the process's one clock.
class PingPong {
 public:
  PingPong(io_context& io, LinkPacer& client_link, LinkPacer& server_link)
      : sockets_(test::loopback_pair(io)),
        client_{sockets_.first, client_link, test::asio::steady_timer(io)},
        server_{sockets_.second, server_link, test::asio::steady_timer(io)} {}

  void run(int pings) {
    remaining_ = pings;
    ping();
  }

  std::vector<Duration> one_way;  // both directions, in order
  std::vector<Duration> round_trip;

 private:
  using Message = std::array<char, 16>;  // send time (ns), sequence
  struct End {
    test::tcp::socket& socket;
    LinkPacer& link;
    test::asio::steady_timer timer;
    Message in{};
    Message out{};
  };

  // Stamps the message when it is ready and writes it when the end's link releases it.
  static void send(End& end, std::function<void()> sent) {
    const TimePoint ready = test::now();
    const std::int64_t stamp = ready.time_since_epoch().count();
    std::memcpy(end.out.data(), &stamp, sizeof stamp);
    end.timer.expires_at(to_steady(end.link.on_send(ready, end.out.size()).release));
    end.timer.async_wait([&end, sent = std::move(sent)](boost::system::error_code) {
      test::asio::async_write(end.socket, test::asio::buffer(end.out),
                              [sent](boost::system::error_code ec, std::size_t) {
                                if (ec) throw boost::system::system_error(ec);
                                sent();
                              });
    });
  }

  void receive(End& end, std::function<void()> received) {
    test::asio::async_read(end.socket, test::asio::buffer(end.in),
                           [this, &end, received](boost::system::error_code ec, std::size_t) {
                             if (ec) throw boost::system::system_error(ec);
                             std::int64_t stamp = 0;
                             std::memcpy(&stamp, end.in.data(), sizeof stamp);
                             one_way.push_back(test::now() - TimePoint(Duration(stamp)));
                             received();
                           });
  }

  void ping() {
    const TimePoint started = test::now();
    receive(server_, [this] { send(server_, [] {}); });
    receive(client_, [this, started] {
      round_trip.push_back(test::now() - started);
      if (--remaining_ > 0) ping();
    });
    send(client_, [] {});
  }

  std::pair<test::tcp::socket, test::tcp::socket> sockets_;
  End client_;
  End server_;
  int remaining_ = 0;
};

// Every one-way delay is at least the latency (a timer never fires early), and the fastest
// ping is within 5 ms of it. The fastest, because scheduling delays only ever add: on this
// loaded machine a wakeup can come 5-10 ms late, which is the machine, not the link (the
// medians are printed for docs/LINK_EMULATION.md).
TEST(LoopbackShaping, PingOverA40msLinkMeasures40msEachWay) {
  LinkSettings s;
  s.latency = 40ms;
  auto client_link = pacer_for(s, 1);
  auto server_link = pacer_for(s, 2);
  io_context io;
  PingPong pp(io, *client_link, *server_link);
  pp.run(8);
  io.run();
  ASSERT_EQ(pp.one_way.size(), 16u);
  ASSERT_EQ(pp.round_trip.size(), 8u);
  for (const Duration d : pp.one_way) EXPECT_GE(d, 40ms);
  for (const Duration d : pp.round_trip) EXPECT_GE(d, 80ms);
  const auto ms = [](Duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf(
      "ping over 40 ms links: one-way min %.3f median %.3f ms, round trip min %.3f "
      "median %.3f ms\n",
      ms(fastest(pp.one_way)), ms(median(pp.one_way)), ms(fastest(pp.round_trip)),
      ms(median(pp.round_trip)));
}

}  // namespace
}  // namespace loco::net
