// The tracker under load (issue 9). Two parts:
//  1. core: the sans-I/O TrackerCore alone, in-process, with N simulated peers (default 10,000)
//     that join (staggered over 2 s) and then heartbeat every 2 s for a virtual minute; the figure
//     is the core's inputs (messages and timers) handled per second of wall time.
//  2. server: a real loco-tracker process and, in this process, one Asio client per peer (default
//     1,000; spread over --client-threads event loops) over loopback, each authenticated on its own
//     connection, joined, and heartbeating every 2 s; the figures are the heartbeat acks per
//     second, the 99th percentile of the time from a heartbeat to its ack, the tracker's resident
//     memory (/proc/PID/status VmRSS) with every peer connected, and the tracker's CPU time per
//     second of wall time (/proc/PID/stat) while measuring: on a machine shared with other work the
//     acks may wait for a core the tracker does not get, and this says how much of one it used.
// Prints progress to stderr and, as its last line:
//   tracker-load: core_events_per_s=... server_peers=... replicas=... joined=... join_s=...
//   server_heartbeats_per_s=... server_p99_ms=... rss_mb=... tracker_cpu=...
// A part that did not run or measured nothing (a client refused, no heartbeat acked, or a client
// of the bench's own that went over 8 s without sending a heartbeat: then the tracker's evictions
// would measure the bench) prints "nan" for its figures, says why on stderr (keeping the tracker's
// log), and the exit status is 1. Stderr also says how many clients got no ack while measuring.
// Options: --core-peers N --server-peers N --client-threads N (the clients' event loops, default 4)
// --settle-s S (after the joins, before measuring; default 2) --measure-s S --join-s S (how long
// the clients may take to join; then the part fails)
// --tracker PATH (another loco-tracker binary, e.g. an older build to compare with; default: the
// one next to this program); --replicas N (the server half against the leader of N tracker
// replicas over a 3-member etcd on loopback, docs/TRACKER.md "Running replicas"; default 0: one
// tracker, no etcd).
// The tracker runs with configs/tiny.toml as its run config.

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../tests/support/child_process.hpp"  // a child with a stdout pipe (also the tests')
#include "../tests/support/etcd_cluster.hpp"   // --replicas: a 3-member etcd on loopback
#include "loco/cli/train_options.hpp"
#include "loco/net/host_port.hpp"
#include "loco/net/message_assembler.hpp"
#include "loco/net/stream_bundle.hpp"
#include "loco/proto/tracker_core.hpp"
#include "loco/secure/identity.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/run_settings.hpp"

namespace {

using namespace loco;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Options {
  std::size_t core_peers = 10'000;
  std::size_t server_peers = 1'000;
  std::size_t client_threads = 4;
  int measure_s = 20;
  int settle_s = 2;
  int join_s = 600;
  int replicas = 0;     // 0: one tracker with no etcd
  std::string tracker;  // "": next to this program
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const auto value = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--tracker") {
      o.tracker = argv[i + 1];
    } else if (flag == "--core-peers") {
      o.core_peers = value;
    } else if (flag == "--server-peers") {
      o.server_peers = value;
    } else if (flag == "--client-threads") {
      o.client_threads = std::max<std::size_t>(value, 1);
    } else if (flag == "--settle-s") {
      o.settle_s = static_cast<int>(value);
    } else if (flag == "--measure-s") {
      o.measure_s = static_cast<int>(value);
    } else if (flag == "--join-s") {
      o.join_s = static_cast<int>(value);
    } else if (flag == "--replicas") {
      o.replicas = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

proto::JoinRequest join_request(std::size_t i, std::vector<proto::Setting> settings,
                                Digest genesis = Digest{1}) {
  proto::JoinRequest r;
  r.software = "loco tracker-load";
  r.listen_address = "127.0.0.1:" + std::to_string(10'000 + i);
  r.upload_bps = 100'000'000;
  r.settings = std::move(settings);
  r.genesis = genesis;
  r.state_hash = r.genesis;
  return r;
}

// Part 1: the core alone, in virtual time.
double core_events_per_s(std::size_t peers) {
  const Duration heartbeat = std::chrono::seconds(2);
  proto::TrackerCoreConfig config;
  config.run_id = "bench";
  config.admission.kind = proto::AdmissionPolicy::Kind::open;
  config.settings = {{"model", "bench"}};
  config.genesis = Digest{1};
  config.shard_count = static_cast<std::uint32_t>(peers);
  const secure::KeyPair tracker_key = secure::KeyPair::generate();
  std::vector<proto::PeerKey> keys;
  for (std::size_t i = 0; i < peers; ++i) {
    std::array<std::uint8_t, 32> seed{};
    std::memcpy(seed.data(), &i, sizeof i);
    keys.push_back(secure::KeyPair::from_seed(seed).public_key());
  }
  TimePoint now{};
  proto::TrackerCore core(config, tracker_key, std::nullopt, now);
  std::uint64_t inputs = 0, transmits = 0, bytes = 0;
  const auto drain = [&] {
    while (core.poll_event()) {
    }
    while (auto probe = core.poll_probe())
      core.on_probe_result(now, probe->peer, probe->address, true);
    while (auto t = core.poll_transmit()) {
      ++transmits;
      bytes += t->body->size();
    }
  };
  const auto input = [&](TimePoint t, std::size_t peer, proto::MessageType type,
                         std::span<const std::byte> body) {
    while (core.poll_timeout() <= t) {
      now = core.poll_timeout();
      core.on_timer(now);
      ++inputs;
      drain();
    }
    now = t;
    core.on_message(now, keys[peer], static_cast<std::uint16_t>(type), body);
    ++inputs;
    drain();
  };
  const auto step = heartbeat / static_cast<std::int64_t>(peers);

  auto start = Clock::now();
  const auto settings = config.settings;
  for (std::size_t i = 0; i < peers; ++i)
    input(TimePoint{} + step * static_cast<std::int64_t>(i), i, proto::MessageType::join_request,
          proto::encode(join_request(i, settings)));
  std::fprintf(stderr, "core: %zu joins in %.2f s of wall time (%llu transmits, %.1f MB)\n", peers,
               seconds_since(start), static_cast<unsigned long long>(transmits), bytes / 1e6);

  const auto beat = proto::encode(proto::Heartbeat{});
  const int beats = 30;  // a virtual minute
  inputs = transmits = bytes = 0;
  start = Clock::now();
  for (int k = 1; k <= beats; ++k)
    for (std::size_t i = 0; i < peers; ++i)
      input(TimePoint{} + heartbeat * k + step * static_cast<std::int64_t>(i), i,
            proto::MessageType::heartbeat, beat);
  const double wall = seconds_since(start);
  std::fprintf(
      stderr, "core: %llu inputs (%d heartbeats per peer) in %.2f s; members %zu at the end\n",
      static_cast<unsigned long long>(inputs), beats, wall, core.status(now).members.size());
  return static_cast<double>(inputs) / wall;
}

// Part 2: a real loco-tracker and `peers` clients over loopback. A figure not measured (a client
// not joined, no ack) is NaN, printed as "nan", and the benchmark fails.
struct ServerFigures {
  std::size_t joined = 0;
  double join_s = std::nan("");  // until every client joined
  double heartbeats_per_s = std::nan("");
  double p99_ms = std::nan("");
  double rss_mb = std::nan("");
  double tracker_cpu = std::nan("");  // CPU seconds per second of wall time while measuring
};

// The process's user and system CPU time so far (/proc/PID/stat, fields 14 and 15).
double cpu_seconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const auto end = text.rfind(')');  // the command name may hold spaces
  if (end == std::string::npos) return std::nan("");
  std::istringstream fields(text.substr(end + 2));
  std::string field;
  unsigned long long user = 0, system = 0;
  for (int i = 3; i <= 13; ++i) fields >> field;  // state .. cmajflt
  fields >> user >> system;
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::size_t status_kib(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == field + ":") {
      std::size_t kib = 0;
      status >> kib;
      return kib;
    }
    std::getline(status, key);
  }
  return 0;
}

std::optional<std::uint64_t> tracker_message_limit(std::uint16_t type) {
  const auto info = proto::message_info(type);
  if (!info || info->route != proto::Route::tracker_to_peer) return std::nullopt;
  return info->max_bytes;
}

class Client {
 public:
  Client(boost::asio::io_context& io, std::size_t index) : index_(index), timer_(io) {}

  void connect(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& tracker,
               const secure::PublicKey& pinned, const proto::JoinRequest& join,
               std::function<void(bool joined)> on_settled) {
    on_settled_ = std::move(on_settled);
    join_ = proto::encode(join);
    bundle_ = net::StreamBundle::connect(
        io, tracker, net::BundleConfig{},
        net::ChannelSetup{.identity = &key_,
                          .config = secure::ChannelConfig{.run_id = "bench"},
                          .accept = [pinned](const secure::PublicKey& k) { return k == pinned; },
                          .peer_label = "the tracker"},
        net::BundleHandlers{
            .on_ready =
                [this] {
                  bundle_->send(static_cast<std::uint16_t>(proto::MessageType::join_request),
                                join_);
                },
            .on_chunk = [this](const net::BundleChunk& piece) { on_piece(piece); },
            .on_closed =
                [this](const Error* error) {
                  if (error != nullptr && !settled_)
                    std::fprintf(stderr, "peer %zu: %s\n", index_, error->what());
                  if (settled_) trace.closed = Clock::now();
                  settle(false);
                  timer_.cancel();
                },
        });
  }

  std::vector<double>* rtts_ms = nullptr;  // where acks' delays go while measuring
  std::size_t index() const { return index_; }

  // When this client joined, sent each heartbeat, had it taken by its connection (encrypted and
  // queued for the socket) and was closed after its join (an eviction), and how late its
  // heartbeat timer fired at worst: a member the tracker evicts that sent in time was lost there.
  struct Trace {
    Clock::time_point joined, closed;
    std::vector<Clock::time_point> sent, taken;
    double worst_late_ms = 0;
  };
  Trace trace;
  std::size_t acks_measured = 0;

 private:
  // Heartbeats from now on, the first after `phase`.
  void start_heartbeats(Duration phase) {
    timer_.expires_after(phase);
    timer_.async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      const auto now = Clock::now();
      trace.worst_late_ms =
          std::max(trace.worst_late_ms,
                   std::chrono::duration<double, std::milli>(now - timer_.expiry()).count());
      trace.sent.push_back(now);
      sent_.push_back(now);
      bundle_->send(static_cast<std::uint16_t>(proto::MessageType::heartbeat), beat_,
                    [this] { trace.taken.push_back(Clock::now()); });
      start_heartbeats(std::chrono::seconds(2));
    });
  }

  void on_piece(const net::BundleChunk& piece) {
    auto whole = assembler_.add(piece);
    if (!whole) return;
    const auto type = static_cast<proto::MessageType>(whole->type);
    if (type == proto::MessageType::join_reply) {
      const auto reply = proto::decode<proto::JoinReply>(whole->bytes);
      const bool accepted = reply.accepted;
      if (!accepted) std::fprintf(stderr, "peer %zu: refused: %s\n", index_, reply.refusal.c_str());
      // Heartbeats from the join on (or the tracker evicts the early joiners while the others
      // join), each client at its own phase of the 2 s period.
      if (accepted) {
        trace.joined = Clock::now();
        start_heartbeats(milliseconds(index_ * 7919 % 2000));
      }
      settle(accepted);
    } else if (type == proto::MessageType::heartbeat_ack && !sent_.empty()) {
      const double ms =
          std::chrono::duration<double, std::milli>(Clock::now() - sent_.front()).count();
      sent_.pop_front();
      if (rtts_ms != nullptr) {
        rtts_ms->push_back(ms);
        ++acks_measured;
      }
    }
  }

  void settle(bool joined) {
    if (settled_) return;
    settled_ = true;
    on_settled_(joined);
  }

  std::size_t index_;
  secure::KeyPair key_ = secure::KeyPair::generate();
  std::shared_ptr<net::StreamBundle> bundle_;
  net::MessageAssembler assembler_{tracker_message_limit, std::uint64_t{4} << 20};
  boost::asio::steady_timer timer_;
  std::vector<std::byte> join_;
  const std::vector<std::byte> beat_ = proto::encode(proto::Heartbeat{});
  std::deque<Clock::time_point> sent_;
  std::function<void(bool)> on_settled_;
  bool settled_ = false;
};

// How late this process's own event loop runs a 100 ms timer, at worst: the clients share one
// thread, and a client that cannot run cannot heartbeat. A tracker that evicts members while this
// is near its eviction timeout measured the bench, not itself.
class LoopLag {
 public:
  explicit LoopLag(boost::asio::io_context& io) : timer_(io) {}
  void start() {
    due_ = Clock::now() + kTick;
    timer_.expires_at(due_);
    timer_.async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      worst_ms_ = std::max(worst_ms_,
                           std::chrono::duration<double, std::milli>(Clock::now() - due_).count());
      start();
    });
  }
  void stop() { timer_.cancel(); }
  double worst_ms() const { return worst_ms_; }

 private:
  static constexpr auto kTick = milliseconds(100);
  boost::asio::steady_timer timer_;
  Clock::time_point due_;
  double worst_ms_ = 0;
};

// A share of the clients on one event loop, run by one thread at a time.
struct ClientGroup {
  boost::asio::io_context io;
  std::vector<std::unique_ptr<Client>> clients;
  LoopLag lag{io};
  std::vector<double> rtts;  // while measuring
  std::size_t next = 0;

  // Joins every client, two at a time, and runs until stop() (once every group's clients have
  // joined or failed: a group that stopped as soon as its own had would leave its members silent
  // while the other groups join, and the tracker evicts them) or `limit`.
  void join(const boost::asio::ip::tcp::endpoint& tracker, const secure::PublicKey& pinned,
            const std::vector<proto::Setting>& settings, const Digest& genesis,
            const std::function<void(bool)>& on_settled, Duration limit) {
    if (clients.empty()) return;
    std::function<void()> connect_next = [&] {
      if (next == clients.size()) return;
      Client& c = *clients[next++];
      c.connect(io, tracker, pinned, join_request(c.index(), settings, genesis), [&](bool ok) {
        on_settled(ok);
        connect_next();
      });
    };
    for (int i = 0; i < 2; ++i) connect_next();
    lag.start();
    run_for(limit);
  }
  void run_for(Duration d) {
    boost::asio::steady_timer end(io);
    end.expires_after(d);
    end.async_wait([this](const boost::system::error_code& error) {
      if (!error) io.stop();
    });
    io.restart();
    io.run();
  }
  void measure(Duration d) {
    for (auto& c : clients) c->rtts_ms = &rtts;
    run_for(d);
    lag.stop();
  }
};

// Runs fn on every group, each on a thread of its own, and waits for all.
template <typename Fn>
void run_groups(std::vector<std::unique_ptr<ClientGroup>>& groups, Fn fn) {
  std::vector<std::thread> threads;
  for (auto& group : groups) threads.emplace_back([&fn, &group] { fn(*group); });
  for (auto& thread : threads) thread.join();
}

// Whether the clients themselves sent their heartbeats in time: for each joined client, the longest
// wait from its join or a heartbeat to the next one it sent (and had its connection take, i.e.
// encrypt for the socket) or to now. Over 8 s (the tracker evicts after 10 s of silence) the bench
// starved its own members, whatever the tracker did, and the worst client is printed in full (in
// ms after its join). Also printed: how many the tracker closed after their join (an eviction:
// these clients never leave). Returns the number of clients over 8 s.
std::size_t report_sending(const std::vector<std::unique_ptr<ClientGroup>>& groups) {
  const auto now = Clock::now();
  const auto longest_gap = [now](Clock::time_point joined,
                                 const std::vector<Clock::time_point>& at) {
    double worst = 0;
    Clock::time_point last = joined;
    for (const auto t : at) {
      worst = std::max(worst, std::chrono::duration<double>(t - last).count());
      last = t;
    }
    return std::max(worst, std::chrono::duration<double>(now - last).count());
  };
  std::size_t silent = 0, closed = 0;
  double worst_sent = 0, worst_taken = 0, worst_late = 0;
  const Client* worst = nullptr;
  for (const auto& group : groups)
    for (const auto& c : group->clients) {
      const Client::Trace& t = c->trace;
      if (t.joined == Clock::time_point{}) continue;
      closed += t.closed != Clock::time_point{};
      if (t.closed != Clock::time_point{}) continue;  // silent since, by the tracker's doing
      const double sent = longest_gap(t.joined, t.sent);
      worst_taken = std::max(worst_taken, longest_gap(t.joined, t.taken));
      worst_late = std::max(worst_late, t.worst_late_ms);
      silent += sent > 8.0;
      if (sent > worst_sent) {
        worst_sent = sent;
        worst = c.get();
      }
    }
  std::fprintf(stderr,
               "server: the clients' own heartbeats: longest wait for the next %.1f s (taken by "
               "the connection: %.1f s), %zu clients over 8 s; timers at worst %.0f ms late; %zu "
               "clients closed by the tracker after joining\n",
               worst_sent, worst_taken, silent, worst_late, closed);
  if (worst == nullptr || worst_sent <= 8.0) return silent;
  const auto ms = [&](Clock::time_point t) {
    return static_cast<long long>(
        std::chrono::duration_cast<milliseconds>(t - worst->trace.joined).count());
  };
  std::string sent, taken;
  for (const auto t : worst->trace.sent) sent += fmt::format(" {}", ms(t));
  for (const auto t : worst->trace.taken) taken += fmt::format(" {}", ms(t));
  std::fprintf(stderr,
               "server: FAILED: the bench's own loops starved its clients (the tracker evicts "
               "after 10 s); client %zu joined %lld ms ago; heartbeats sent at +ms%s, taken at "
               "+ms%s\n",
               worst->index(), ms(now), sent.c_str(), taken.c_str());
  return silent;
}

// The server half's tracker: one loco-tracker, or `replicas` of them over a 3-member etcd on
// loopback as the failover bench starts it (tests/support/etcd_cluster.hpp; 3 s lease), of which
// the first leads and is measured: the others start once it listens, and only poll etcd.
struct Server {
  std::unique_ptr<test::EtcdCluster> etcd;  // none for a single tracker
  std::vector<std::unique_ptr<test::ChildProcess>> trackers;
  std::string line;  // the measured one's "listening on HOST:PORT as KEY"
  test::ChildProcess& measured() { return *trackers.front(); }
};

std::unique_ptr<Server> start_server(const std::string& program, const std::filesystem::path& dir,
                                     const std::string& config, std::size_t peers, int replicas) {
  auto server = std::make_unique<Server>();
  std::vector<std::string> argv = {program,
                                   "--tracker.key",
                                   (dir / "tracker.key").string(),
                                   "--tracker.listen",
                                   "127.0.0.1:0",
                                   "--tracker.state-file",
                                   "",
                                   "--tracker.http",
                                   "",
                                   "--run.id",
                                   "bench",
                                   "--run.config",
                                   config,
                                   "--admission.policy",
                                   "open",
                                   "--run.shard-count",
                                   std::to_string(std::max<std::size_t>(peers, 64)),
                                   "--tracker.max-connections-per-address",
                                   std::to_string(peers + 16),
                                   "--tracker.max-members-per-address",
                                   "0",
                                   "--tracker.max-connections",
                                   std::to_string(peers + 16)};
  if (replicas > 0) {
    server->etcd = std::make_unique<test::EtcdCluster>(3);
    std::string etcd;
    for (const auto& member : server->etcd->endpoints())
      etcd += (etcd.empty() ? "http://" : ",http://") + member.host + ":" + member.port;
    argv.insert(argv.end(), {"--tracker.etcd", etcd, "--tracker.etcd-lease", "3s"});
  }
  for (int i = 0; i < std::max(replicas, 1); ++i) {
    std::vector<std::string> own = argv;
    if (replicas > 0) own.insert(own.end(), {"--tracker.replica", "r" + std::to_string(i)});
    const std::string log = i == 0 ? "tracker.log" : "tracker-r" + std::to_string(i) + ".log";
    server->trackers.push_back(std::make_unique<test::ChildProcess>(own, dir / log));
    if (i == 0) server->line = server->trackers.front()->read_line();
  }
  return server;
}

ServerFigures server_figures(std::size_t peers, std::size_t threads, int settle_s, int measure_s,
                             int join_s, int replicas, const std::string& program) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("loco-tracker-load-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  secure::write_key_file(dir / "tracker.key", secure::KeyPair::generate(), false);
  const std::string config = std::string(LOCO_SOURCE_DIR) + "/configs/tiny.toml";
  const std::unique_ptr<Server> server = start_server(program, dir, config, peers, replicas);
  test::ChildProcess& tracker = server->measured();
  const std::string& line = server->line;
  const auto as = line.find(" as ");
  if (!line.starts_with("listening on ") || as == std::string::npos) {
    std::fprintf(stderr, "the tracker did not start; its log is in %s\n", dir.c_str());
    std::exit(1);
  }
  boost::asio::io_context io;
  const auto endpoint =
      net::resolve(io, net::parse_host_port(line.substr(13, as - 13), /*allow_any_port=*/false));
  const auto pinned = secure::parse_public_key(line.substr(as + 4));
  // The join carries what a real peer's does: the run's settings and genesis (the tracker refuses
  // another initial state).
  const train::TrainConfig run = cli::load_train_config(config);
  const auto settings = train::run_settings(run);
  const Digest genesis = train::genesis_state(run).hash();

  // The clients are spread over `threads` event loops, each on its own thread: 10,000 peers
  // joining receive O(N^2) bytes of views (GB), and one thread playing all of them falls behind
  // on a shared machine until its heartbeats stop. Each group joins its clients two at a time (the
  // tracker caps connections in their handshake per address).
  std::vector<std::unique_ptr<ClientGroup>> groups;
  for (std::size_t g = 0; g < threads; ++g) groups.push_back(std::make_unique<ClientGroup>());
  for (std::size_t i = 0; i < peers; ++i) {
    ClientGroup& group = *groups[i % threads];
    group.clients.push_back(std::make_unique<Client>(group.io, i));
  }
  std::atomic<std::size_t> joined = 0, settled = 0;
  const auto start = Clock::now();
  const auto on_settled = [&](bool ok) {
    joined += ok;
    const std::size_t n = ++settled;
    if (n % 100 == 0)
      std::fprintf(stderr, "server: %zu of %zu joined after %.1f s\n", joined.load(), peers,
                   seconds_since(start));
    if (n == peers)
      for (const auto& group : groups) group->io.stop();  // io_context::stop is thread-safe
  };
  run_groups(groups, [&](ClientGroup& group) {
    group.join(endpoint, pinned, settings, genesis, on_settled, std::chrono::seconds(join_s));
  });
  ServerFigures f;
  f.joined = joined;
  const double join_wall = seconds_since(start);
  const auto worst_lag = [&] {
    double worst = 0;
    for (const auto& group : groups) worst = std::max(worst, group->lag.worst_ms());
    return worst;
  };
  std::fprintf(stderr,
               "server: %zu of %zu joined in %.1f s; tracker RSS %.1f MB (peak %.1f); the clients' "
               "loops at worst %.0f ms late\n",
               f.joined, peers, join_wall, status_kib(tracker.pid(), "VmRSS") / 1024.0,
               status_kib(tracker.pid(), "VmHWM") / 1024.0, worst_lag());
  const std::size_t starved = report_sending(groups);
  if (f.joined != peers) {
    std::fprintf(stderr, "server: FAILED: %zu of %zu clients did not join; the tracker's log: %s\n",
                 peers - f.joined, peers, (dir / "tracker.log").c_str());
    return f;
  }

  // A client of the bench's own that went silent: the run measured the bench.
  const auto starved_by_bench = [&] {
    std::fprintf(stderr, "server: the tracker's log: %s\n", (dir / "tracker.log").c_str());
    return f;
  };
  if (starved > 0) return starved_by_bench();

  // Measured after `settle_s` of settling: at 10,000 peers the views of the last joins are still
  // arriving for a while (GB in all), and the clients' loops are behind until they have.
  f.join_s = join_wall;
  run_groups(groups, [&](ClientGroup& group) { group.run_for(std::chrono::seconds(settle_s)); });
  const double cpu_before = cpu_seconds(tracker.pid());
  run_groups(groups, [&](ClientGroup& group) { group.measure(std::chrono::seconds(measure_s)); });
  if (report_sending(groups) > 0) return starved_by_bench();
  std::size_t unacked = 0;  // evicted, or the tracker never got to them
  for (const auto& group : groups)
    for (const auto& c : group->clients) unacked += c->acks_measured == 0;
  std::vector<double> rtts;
  for (const auto& group : groups) rtts.insert(rtts.end(), group->rtts.begin(), group->rtts.end());
  f.tracker_cpu = (cpu_seconds(tracker.pid()) - cpu_before) / measure_s;
  f.rss_mb = status_kib(tracker.pid(), "VmRSS") / 1024.0;
  if (rtts.empty()) {
    std::fprintf(stderr, "server: FAILED: no heartbeat acked in %d s; the tracker's log: %s\n",
                 measure_s, (dir / "tracker.log").c_str());
    return f;
  }
  f.heartbeats_per_s = static_cast<double>(rtts.size()) / measure_s;
  std::sort(rtts.begin(), rtts.end());
  f.p99_ms = rtts[std::min(rtts.size() - 1, rtts.size() * 99 / 100)];
  std::fprintf(stderr,
               "server: %zu acks in %d s; median %.2f ms, p99 %.2f ms, max %.2f ms; %zu clients "
               "had none\n",
               rtts.size(), measure_s, rtts[rtts.size() / 2], f.p99_ms, rtts.back(), unacked);
  std::fprintf(stderr,
               "server: tracker RSS %.1f MB (peak %.1f MB), %.2f s of CPU a second; the clients' "
               "loops at worst %.0f ms late\n",
               f.rss_mb, status_kib(tracker.pid(), "VmHWM") / 1024.0, f.tracker_cpu, worst_lag());
  std::filesystem::remove_all(dir);
  return f;
}

// Every connection is a descriptor here and one in the tracker (which inherits the limit).
void raise_descriptor_limit() {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  raise_descriptor_limit();
  const double core = core_events_per_s(o.core_peers);
  const std::string tracker =
      !o.tracker.empty()
          ? o.tracker
          : (std::filesystem::canonical(argv[0]).parent_path() / "loco-tracker").string();
  const ServerFigures server = server_figures(o.server_peers, o.client_threads, o.settle_s,
                                              o.measure_s, o.join_s, o.replicas, tracker);
  std::printf(
      "tracker-load: core_events_per_s=%.0f server_peers=%zu replicas=%d joined=%zu join_s=%.1f "
      "server_heartbeats_per_s=%.1f server_p99_ms=%.2f rss_mb=%.1f tracker_cpu=%.2f\n",
      core, o.server_peers, o.replicas, server.joined, server.join_s, server.heartbeats_per_s,
      server.p99_ms, server.rss_mb, server.tracker_cpu);
  const bool measured = std::isfinite(core) && core > 0 && std::isfinite(server.heartbeats_per_s) &&
                        std::isfinite(server.p99_ms) && std::isfinite(server.rss_mb);
  return measured ? 0 : 1;
}
