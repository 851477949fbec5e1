#include "serve.hpp"

#include <fmt/ostream.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <thread>

#include "etcd_state.hpp"
#include "loco/core/error.hpp"
#include "loco/net/host_port.hpp"
#include "loco/net/stripe_layout.hpp"
#include "loco/secure/identity.hpp"
#include "model_export.hpp"
#include "replica.hpp"
#include "status_http.hpp"
#include "store_thread.hpp"
#include "tracker_service.hpp"

namespace loco::tracker {
namespace {

constexpr auto kShutdownGrace = std::chrono::seconds(2);

// The run's saved state, if the state file exists (a restart); nothing for a new run.
std::optional<proto::TrackerSnapshot> load_state(StateStore* state) {
  if (state == nullptr) return std::nullopt;
  auto restored = state->load();
  if (!restored) return std::nullopt;
  spdlog::info("continuing run {} from {}: round {} committed", restored->run_id, state->where(),
               restored->committed_round);
  return restored;
}

// Custody copies live next to the state file (a replica's own, beside no state file: its
// state is in etcd); without one they are kept in memory only.
std::unique_ptr<CustodyStore> custody_store(const TrackerOptions& options,
                                            const proto::TrackerCoreConfig& config) {
  if (config.custody.every == 0 || options.state_file.empty()) return nullptr;
  return std::make_unique<CustodyStore>(options.state_file + ".custody", options.run_id,
                                        to_custody_limits(options));
}

net::HostPort parse_address(const std::string& text, const char* option) {
  try {
    return net::parse_host_port(text, /*allow_any_port=*/true);
  } catch (const Error& e) {
    throw Error(ErrorCategory::config, fmt::format("{}: {}", option, e.message()));
  }
}

// How the tracker's listener sets up each connection's channel.
net::BundleListenerConfig listener_config(const TrackerOptions& options, const secure::KeyPair& key,
                                          net::ListenerLimits limits) {
  // What an admitted connection may send before its peer joined (TrackerService narrows it
  // once the peer has joined): a frame carries at most one whole message and its stripe header.
  const std::uint64_t joining_frame = options.max_buffer_joining + net::kStripeHeaderBytes;
  // The channel's message limit also bounds what the tracker sends: the largest tracker -> peer
  // message is a view delta (4 MiB, proto/message_type.cpp). What a peer may send is narrowed by
  // the frame size here and by TrackerService (BufferCaps) once its bundle is up.
  const std::uint64_t largest_message = (std::uint64_t{4} << 20) + net::kStripeHeaderBytes;
  return net::BundleListenerConfig{
      .setup =
          net::ChannelSetup{
              .identity = &key,
              .config = secure::ChannelConfig{.run_id = options.run_id,
                                              .max_message_bytes = largest_message,
                                              .max_frame_bytes =
                                                  static_cast<std::uint32_t>(joining_frame)},
              .accept = [](const secure::PublicKey&) { return true; },
              .peer_label = {}},
      .limits = limits,
      .max_streams = 1,
      .link = nullptr,
      // Two frames ahead of each socket: a broadcast's full view to hundreds of newcomers (~700 KB
      // each at 10,000 members) is encrypted as each connection drains, not all in one turn of
      // the event loop, and a slow reader holds two frames of the tracker's memory, not its view.
      .send_window_bytes = 2 * joining_frame,
  };
}

// The status page (and the model's download) on --tracker.http, when it is set.
std::shared_ptr<StatusHttpServer> start_status_page(boost::asio::io_context& io,
                                                    const TrackerOptions& options,
                                                    const DownloadLimits& downloads,
                                                    TrackerService& service,
                                                    std::function<proto::TrackerStatus()> status) {
  if (options.http.empty()) {
    if (!options.dataset.empty())
      throw Error(ErrorCategory::config,
                  "--tracker.dataset: it is served on the status server, and --tracker.http is "
                  "empty");
    return nullptr;
  }
  const net::HostPort address = parse_address(options.http, "--tracker.http");
  // Checked before the server listens: a folder that is not the dataset stops the tracker.
  const auto dataset = options.dataset.empty() ? nullptr : DatasetFiles::open(options.dataset);
  auto http = StatusHttpServer::create(
      io, net::resolve(io, address), std::move(status),
      StatusHttpLimits{.download = downloads, .max_dataset_downloads = options.dataset_downloads},
      model_source(options,
                   [&service]() -> std::optional<HeldCopy> {
                     const auto entry = service.core().custody();
                     if (!entry) return std::nullopt;
                     return HeldCopy{.round = entry->round,
                                     .state_hash = entry->state_hash,
                                     .state = service.core().custody_state()};
                   }),
      dataset);
  http->start();
  if (dataset)
    spdlog::info("serving dataset {} ({} files) at http://{}/dataset/",
                 dataset->manifest_hash().substr(0, 16), dataset->size(),
                 fmt::streamed(http->local_endpoint()));
  spdlog::info("status page at http://{}/", fmt::streamed(http->local_endpoint()));
  return http;
}

// A leading replica: its etcd calls' thread, the term it leads in, and what its status page shows
// of the election: the loop's own copies (the looks run on the store thread), the candidates as
// the last look found them and how this term began.
struct Leading {
  Replica& replica;
  std::int64_t term = 0;
  StoreThread* store_thread = nullptr;      // set by serve_term for the term's length
  std::vector<replica::Leader> candidates;  // oldest first
  proto::Failover last_failover;
};

// The status page's figures: the service's, and a replica's name, term, time it leads since, the
// replicas its last look at the election found and how it came to lead.
proto::TrackerStatus status_of(TrackerService& service, const Leading* leading,
                               std::int64_t leading_since_ms) {
  proto::TrackerStatus s = service.status();
  if (leading != nullptr) {
    s.replica = leading->replica.name();
    s.replica_term = static_cast<std::uint64_t>(leading->term);
    s.leading_since_ms = static_cast<std::uint64_t>(leading_since_ms);
    for (const replica::Leader& c : leading->candidates)  // oldest first
      s.replicas.push_back({.name = c.value,
                            .term = static_cast<std::uint64_t>(c.term),
                            .leads = s.replicas.empty()});
    s.last_failover = leading->last_failover;
  }
  return s;
}

// A replica looks at its election between saves too: a deposed leader stops at once. Every
// Replica::kPollPeriod one look, on the store thread (after any save before it), its answer back
// on the loop; until `stopping` or a cancelled `lease`. The loop goes on meanwhile.
void watch_lease(boost::asio::io_context& io, boost::asio::steady_timer& lease, Leading& leading,
                 TrackerService& service, const bool& stopping) {
  lease.expires_after(Replica::kPollPeriod);
  lease.async_wait(
      [&io, &lease, &leading, &service, &stopping](const boost::system::error_code& error) {
        if (error || stopping) return;
        leading.store_thread->post([&io, &lease, &leading, &service, &stopping] {
          const bool still = leading.replica.still_leading(steady_now());
          auto candidates = leading.replica.election().candidates();
          // Run only while the loop runs, and serve_term's locals live as long as it does.
          boost::asio::post(io, [&io, &lease, &leading, &service, &stopping, still,
                                 candidates = std::move(candidates)]() mutable {
            if (stopping) return;
            if (!still) return service.depose();
            leading.candidates = std::move(candidates);
            watch_lease(io, lease, leading, service, stopping);
          });
        });
      });
}

// How a term of service ended: by a signal (the process stops) or deposed (a replica that no
// longer leads: it waits to lead again).
enum class Ended { signalled, deposed };

// Serves the run until a signal, or until `leading` (null: a single tracker) no longer leads.
Ended serve_term(const TrackerOptions& options, const secure::KeyPair& key,
                 std::unique_ptr<StateStore> state, Leading* leading) {
  const net::HostPort address = parse_address(options.listen, "--tracker.listen");
  const proto::TrackerCoreConfig config = to_core_config(options);
  const DownloadLimits downloads = to_download_limits(options);  // checked before anything runs
  auto restored = load_state(state.get());

  boost::asio::io_context io;
  // A replica's etcd calls, off the loop. After the loop and before the service: it outlives the
  // service (a save under way may end after it) and is joined before the loop is destroyed and
  // before the replica's next call on this thread (a resign, the next campaign).
  std::unique_ptr<StoreThread> store_thread;
  if (leading != nullptr) {
    store_thread = std::make_unique<StoreThread>();
    leading->store_thread = store_thread.get();
  }
  const auto start = steady_now();
  std::unique_ptr<CustodyStore> custody = custody_store(options, config);
  TrackerService service(
      io, net::resolve(io, address), listener_config(options, key, to_listener_limits(options)),
      std::make_unique<proto::TrackerCore>(config, key, std::move(restored), start),
      std::move(state), std::move(custody), to_buffer_caps(options), store_thread.get());
  std::shared_ptr<StatusHttpServer> http;
  boost::asio::steady_timer grace(io);
  boost::asio::steady_timer lease(io);
  bool stopping = false;
  const auto shut_down = [&] {
    if (stopping) return;
    stopping = true;
    lease.cancel();
    if (http) http->stop();
    service.stop([&] { io.stop(); });
    grace.expires_after(kShutdownGrace);  // for the close frames, no longer
    grace.async_wait([&](const boost::system::error_code&) { io.stop(); });
  };
  service.set_on_deposed(shut_down);
  service.start();
  if (service.deposed()) return Ended::deposed;  // its first save was refused
  const auto leading_since = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  http = start_status_page(io, options, downloads, service,
                           [&] { return status_of(service, leading, leading_since); });

  bool signalled = false;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& error, int signal) {
    if (error) return;
    spdlog::info("signal {}: closing {} connections and stopping", signal, service.connections());
    signalled = true;
    shut_down();
  });
  if (leading != nullptr) watch_lease(io, lease, *leading, service, stopping);
  std::printf("listening on %s as %s\n",
              fmt::format("{}", fmt::streamed(service.local_endpoint())).c_str(),
              secure::to_hex(key.public_key()).c_str());
  std::fflush(stdout);
  io.run();
  return signalled ? Ended::signalled : Ended::deposed;
}

// SIGINT or SIGTERM while a replica follows (while it leads, serve_term's signal_set has them).
// A lock-free atomic, which a signal handler may set and any thread read.
std::atomic<bool> g_follower_stop = false;
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void stop_following(int) {
  g_follower_stop = true;
}

// A replica's life: waits to lead, serves while it leads, and waits again once deposed.
void serve_replica(const TrackerOptions& options, const secure::KeyPair& key) {
  Replica replica(replica_config(options));
  spdlog::info("replica {} of run {}: etcd at {}", replica.name(), options.run_id, options.etcd);
  while (true) {
    // Again each time: a term's signal_set leaves the default handlers behind it.
    std::signal(SIGINT, stop_following);
    std::signal(SIGTERM, stop_following);
    const std::optional<std::int64_t> term = replica.wait_until_leading(g_follower_stop);
    if (!term) {
      spdlog::info("signal: stopping (resigned)");
      return;
    }
    auto state = std::make_unique<EtcdState>(replica.store(), replica.election(), replica.prefix());
    Leading leading{.replica = replica,
                    .term = *term,
                    .candidates = replica.election().candidates(),
                    .last_failover = replica.failovers().last()};
    try {
      if (serve_term(options, key, std::move(state), &leading) == Ended::signalled) {
        replica.resign();
        return;
      }
      spdlog::warn("replica {}: deposed; waiting to lead again", replica.name());
    } catch (const Error& e) {
      if (e.category() != ErrorCategory::network) throw;
      // The state could not be loaded: nothing was served; lead again once etcd answers.
      spdlog::warn("replica {}: {}; trying again", replica.name(), e.what());
      std::this_thread::sleep_for(Replica::kPollPeriod);
    }
  }
}

}  // namespace

int serve(const TrackerOptions& options) {
  try {
    if (options.key_file.empty())
      throw Error(ErrorCategory::config,
                  "--tracker.key: no identity key file; make one with `loco-tracker keygen --out "
                  "tracker.key` and give its public key to the peers");
    // Checked before anything runs (serve_term makes them again, cheaply, each term).
    parse_address(options.listen, "--tracker.listen");
    to_core_config(options);
    to_listener_limits(options);
    to_download_limits(options);
    const secure::KeyPair key = secure::read_key_file(options.key_file, secure::KeyOwner::tracker);
    if (!options.etcd.empty()) {
      serve_replica(options, key);
      return 0;
    }
    std::unique_ptr<StateStore> state;
    if (!options.state_file.empty()) state = std::make_unique<StateFile>(options.state_file);
    serve_term(options, key, std::move(state), nullptr);
    return 0;
  } catch (const Error& e) {
    spdlog::error("loco-tracker: {}", e.what());
    return 1;
  }
}

}  // namespace loco::tracker
