// A real loco-tracker's memory under authenticated peers that announce large messages and send
// little of them (issue 9: 2,000 such connections used to take the RSS to 2 GB, kept after they
// closed). The tracker must hold about what arrived, not what was announced, within its caps,
// free it once they are gone, and keep serving an honest peer. What it holds is read off its
// /metrics (loco_tracker_heap_bytes: the allocator's own count, the same in a sanitized build);
// in a build without AddressSanitizer the resident size must also fall back once they are gone.

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "../support/temp_dir.hpp"
#include "../support/tracker_attacker.hpp"
#include "../support/tracker_metrics.hpp"
#include "../support/tracker_process.hpp"
#include "loco/net/stripe_layout.hpp"
#include "loco/secure/identity.hpp"

namespace loco {
namespace {

using Bytes = std::vector<std::byte>;
using test::program;

using test::kJoinRequestType;
constexpr std::size_t kAttackers = 300;
constexpr std::size_t kSentBytes = 2048;  // of each announced message
constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

// The process's resident set in KiB, from /proc/PID/status.
std::size_t rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      std::size_t kib = 0;
      status >> kib;
      return kib;
    }
    std::getline(status, key);
  }
  return 0;
}

// Enough descriptors for every attacker here and in the tracker (both inherit this limit).
void raise_descriptor_limit() {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = std::max<rlim_t>(limit.rlim_cur, std::min<rlim_t>(limit.rlim_max, 4096));
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

// The tracker's heap in use, from its /metrics (rendered at most once a second): read until
// `done` holds of it, at most 10 s; the last figure read either way.
std::uint64_t heap_bytes(const test::TrackerProcess& tracker,
                         const std::function<bool(std::uint64_t)>& done = nullptr) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    test::TestClient client(test::endpoint_of(tracker.http_address()));
    const auto samples = test::read_metrics(client);
    const auto it = samples.find("loco_tracker_heap_bytes");
    const std::uint64_t bytes = it == samples.end() ? 0 : static_cast<std::uint64_t>(it->second);
    if (!done || done(bytes) || std::chrono::steady_clock::now() > give_up) return bytes;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling, bounded above
  }
}

TEST(TrackerMemory, HoldsWhatArrivedNotWhatWasAnnouncedAndGivesItBack) {
  raise_descriptor_limit();
  test::TempDir dir;
  secure::write_key_file(dir / "peer.key", secure::KeyPair::generate(), false);
  // Every attacker comes from 127.0.0.1, and all of them are set up at once.
  const std::string room = std::to_string(2 * kAttackers);
  test::TrackerProcess tracker(
      dir.path(), "run-m",
      {"--tracker.max-connections-per-address", room, "--tracker.max-per-address", room,
       "--tracker.max-waiting", room, "--tracker.max-handshakes", room,
       // Setting up 300 attackers may take longer than the default deadlines on a loaded machine.
       "--tracker.handshake-timeout", "120s", "--tracker.bundle-timeout", "120s"});
  ASSERT_TRUE(tracker.started()) << tracker.log();
  const pid_t pid = tracker.process().pid();
  const std::uint64_t baseline = heap_bytes(tracker);
  const std::size_t baseline_rss = rss_kib(pid);
  ASSERT_GT(baseline, 0u);

  // Each attacker announces a 64 KiB join request and sends 2 KiB of it in two frames, then a
  // frame header announcing a 60 KiB chunk and 100 bytes of that frame.
  boost::asio::io_context io;
  std::vector<std::unique_ptr<test::TrackerAttacker>> attackers;
  const Bytes piece(kSentBytes / 2, std::byte{0x41});
  const std::uint64_t announced = 64 * kKiB;
  for (std::size_t i = 0; i < kAttackers; ++i)
    attackers.push_back(test::TrackerAttacker::start(io, "127.0.0.1", tracker.port(), "run-m"));
  for (auto& a : attackers) a->finish();
  for (auto& a : attackers) {
    Bytes first = piece;
    const auto header = net::encode_stripe_header(announced - net::kStripeHeaderBytes);
    std::copy(header.begin(), header.end(), first.begin());
    a->send(a->peer().data(kJoinRequestType, announced, 0, first));
    a->send(a->peer().data(kJoinRequestType, announced, piece.size(), piece));
    Bytes big_frame = a->peer().data(kJoinRequestType, announced, kSentBytes, Bytes(60 * kKiB));
    big_frame.resize(secure::kFrameHeaderBytes + 100);
    a->send(big_frame);
  }
  // An honest peer is served meanwhile; its handshake and join take several rounds of the
  // tracker's event loop, each of which reads every attacker socket that has bytes waiting.
  const std::string check = program("loco-peer") + " check-tracker --peer.key " +
                            (dir / "peer.key").string() +
                            " --run.id run-m --tracker.address 127.0.0.1:" + tracker.port() +
                            " --tracker.public-key " + tracker.public_key() + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(check.c_str()), 0) << tracker.log();
  // The tracker holds at least what arrived (a rendering of /metrics may be a second old).
  const std::uint64_t arrived = kAttackers * kSentBytes;
  const std::uint64_t loaded =
      heap_bytes(tracker, [&](std::uint64_t b) { return b >= baseline + arrived; });
  // What the caps allow per connection: the bytes it sent, one first read of the channel
  // (4 KiB), and the fixed cost of a connection (channel, socket, bundle: well under 24 KiB).
  // Announced sizes alone (64 KiB message + 60 KiB frame) would take 300 x 124 KiB = 36 MiB.
  const std::uint64_t per_connection = kSentBytes + (4 + 24) * kKiB;
  EXPECT_GE(loaded, baseline + arrived) << "baseline " << baseline << " bytes";
  EXPECT_LT(loaded, baseline + kAttackers * per_connection)
      << "baseline " << baseline << " bytes, with " << kAttackers << " attackers " << loaded
      << " bytes\n"
      << tracker.log();

  for (auto& a : attackers) a->close();
  attackers.clear();
  // The tracker sees the closes and frees the connections; wait for the outcome, bounded.
  const std::uint64_t after =
      heap_bytes(tracker, [&](std::uint64_t b) { return b < baseline + 4 * kMiB; });
  EXPECT_LT(after, baseline + 4 * kMiB)
      << "baseline " << baseline << " bytes, loaded " << loaded << ", after the closes " << after;
  std::fprintf(stderr, "tracker heap: %llu bytes idle, %llu with %zu attackers, %llu after\n",
               static_cast<unsigned long long>(baseline), static_cast<unsigned long long>(loaded),
               kAttackers, static_cast<unsigned long long>(after));
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // And it hands the memory back to the system (malloc_trim within TrackerService::kTrimInterval;
  // under a sanitizer the resident size is mostly its shadow, and ASan's quarantine).
  std::size_t after_rss = rss_kib(pid);
  for (int i = 0; i < 100 && after_rss > baseline_rss + 4096; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after_rss = rss_kib(pid);
  }
  EXPECT_LT(after_rss, baseline_rss + 4096) << "resident KiB: " << baseline_rss << " idle";
#else
  (void)baseline_rss;
#endif
  EXPECT_TRUE(tracker.process().running());
  EXPECT_EQ(std::system(check.c_str()), 0) << tracker.log();
}

}  // namespace
}  // namespace loco
