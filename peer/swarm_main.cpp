// loco-swarm: a whole swarm on this machine, for trying loco out. It starts a loco-tracker and N
// loco-peers on loopback (the programs next to its own), each peer with its own emulated link,
// prints one progress line per round and a summary at the end. Thin: options, wiring, signals.
//   loco-swarm --config configs/swarm.toml

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "local_swarm.hpp"
#include "loco/cli/app.hpp"
#include "loco/cli/link_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/log.hpp"
#include "swarm_folder.hpp"
#include "swarm_view.hpp"

namespace {

std::atomic<int> g_signals{0};

extern "C" void count_signal(int) {
  g_signals.fetch_add(1);
}

struct SwarmOptions {
  std::uint32_t peers = 4;
  std::uint32_t min_peers = 1;
  std::string run_id = "local-swarm";
  std::string run_config;
  std::string folder = "loco-swarm";
  std::string status = "127.0.0.1:0";
  std::vector<std::string> link_overrides;  // "PEER: key=value ..."
  loco::cli::LinkOptions link;
};

void add_swarm_options(CLI::App& app, SwarmOptions& o) {
  app.add_option("--swarm.peers", o.peers, "How many loco-peer processes to start (1-64)")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  app.add_option("--swarm.min-peers", o.min_peers,
                 "A round needs at least this many ready peers; below the number of peers, the "
                 "others go on when one fails")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  app.add_option("--swarm.run-id", o.run_id, "The run's id")->capture_default_str();
  loco::cli::add_path_option(app, "--swarm.run-config", o.run_config,
                             "The run's loco-train config (model, data, [strategy] kind = diloco, "
                             "ddp, streaming or demo)");
  loco::cli::add_path_option(app, "--swarm.folder", o.folder,
                             "The run folder: keys, each process's config and log")
      ->capture_default_str();
  app.add_option(
         "--swarm.status", o.status,
         "Where the tracker serves its status page (host:port, port 0: any free; \"\": none)")
      ->capture_default_str();
  app.add_option("--swarm.link-override", o.link_overrides,
                 "One peer's link settings instead of [link]'s, e.g. \"3: upload=5Mbit "
                 "latency=80ms\" (peers are numbered from 1)");
  loco::cli::add_link_options(app, o.link);  // every peer's link
}

// "3: upload=5Mbit latency=80ms" applied to peer 3's link, each value checked as loco-peer's
// --link.KEY checks it.
void apply_override(const std::string& text, std::vector<loco::cli::LinkOptions>& links) {
  const auto fail = [&text](const std::string& why) {
    return loco::Error(loco::ErrorCategory::config,
                       fmt::format("--swarm.link-override \"{}\": {}", text, why));
  };
  std::size_t peer = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), " %zu :%n", &peer, &consumed) != 1 || consumed == 0)
    throw fail("write PEER: KEY=VALUE ..., e.g. \"3: upload=5Mbit latency=80ms\"");
  if (peer < 1 || peer > links.size())
    throw fail(fmt::format("there is no peer {} (peers are 1 to {})", peer, links.size()));
  std::vector<std::string> args;
  std::istringstream words(text.substr(static_cast<std::size_t>(consumed)));
  for (std::string word; words >> word;) {
    const auto equals = word.find('=');
    if (equals == std::string::npos) throw fail(fmt::format("\"{}\" is not KEY=VALUE", word));
    args.push_back("--link." + word.substr(0, equals));
    args.push_back(word.substr(equals + 1));
  }
  CLI::App app;
  loco::cli::add_link_options(app, links[peer - 1]);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw fail(e.what());
  }
}

loco::peer::SwarmPlan make_plan(const SwarmOptions& o) {
  if (o.run_config.empty())
    throw loco::Error(loco::ErrorCategory::config,
                      "--swarm.run-config: name the run's loco-train config, e.g. "
                      "configs/swarm-tiny.toml");
  if (!std::filesystem::exists(o.run_config))
    throw loco::Error(loco::ErrorCategory::config,
                      fmt::format("--swarm.run-config: no file {}", o.run_config));
  if (o.min_peers > o.peers)
    throw loco::Error(loco::ErrorCategory::config,
                      fmt::format("--swarm.min-peers = {} is more than the {} peers: no round "
                                  "could form",
                                  o.min_peers, o.peers));
  loco::peer::SwarmPlan plan{
      .peers = o.peers,
      .min_peers = o.min_peers,
      .run_id = o.run_id,
      .run_config = std::filesystem::absolute(o.run_config).lexically_normal(),
      .folder = std::filesystem::absolute(o.folder).lexically_normal(),
      .status = o.status,
      .links = std::vector<loco::cli::LinkOptions>(o.peers, o.link)};
  for (const auto& text : o.link_overrides) apply_override(text, plan.links);
  for (std::size_t i = 0; i < plan.links.size(); ++i) {
    try {
      loco::cli::to_link_settings(plan.links[i]);  // the values against each other
    } catch (const loco::Error& e) {
      throw loco::Error(e.category(), fmt::format("peer {}'s link: {}", i + 1, e.message()));
    }
  }
  return plan;
}

std::filesystem::path own_folder() {
  return std::filesystem::canonical("/proc/self/exe").parent_path();
}

int run_swarm(const SwarmOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const loco::peer::SwarmPlan plan = make_plan(options);
  const std::filesystem::path bin = own_folder();
  for (const char* program : {"loco-tracker", "loco-peer"})
    if (!std::filesystem::exists(bin / program))
      throw loco::Error(
          loco::ErrorCategory::config,
          fmt::format("{} is not next to loco-swarm in {}: build it too", program, bin.string()));
  const loco::peer::SwarmFolder folder = loco::peer::make_swarm_folder(plan);
  std::printf("loco-swarm: %u peers, run %s (%s), folder %s\n", plan.peers, plan.run_id.c_str(),
              plan.run_config.c_str(), folder.root.c_str());
  loco::peer::LocalSwarm swarm(plan, folder, bin);
  if (!swarm.start(g_signals)) {
    std::printf("stopped by a signal before the peers started\n");
    return 0;
  }
  std::printf("tracker at %s%s; logs in %s\n", swarm.tracker_address().c_str(),
              swarm.status_page().empty()
                  ? ""
                  : fmt::format(", status page {}", swarm.status_page()).c_str(),
              folder.root.c_str());
  std::fflush(stdout);

  loco::peer::SwarmView view(plan.peers);
  const auto print = [](const std::optional<std::string>& line) {
    if (!line) return;
    std::printf("%s\n", line->c_str());
    std::fflush(stdout);
  };
  loco::peer::LocalSwarm::Events events{
      .peer_line =
          [&](std::size_t peer, const std::string& line) {
            print(view.take_line(peer, line, std::chrono::steady_clock::now()));
          },
      .peer_ended =
          [&](std::size_t peer, const loco::peer::ChildProcess& process) {
            if (process.succeeded()) return view.peer_ended(peer, "");
            const std::string failure = fmt::format(
                "peer {} FAILED ({}): \"{}\"; its log: {}", peer + 1, process.exit_description(),
                process.last_line(), process.log_file().string());
            print(failure);
            view.peer_ended(peer, failure);
          },
      .tick = [&](auto now) { print(view.poll(now)); },
  };
  const bool ok = swarm.run(g_signals, events);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("== summary after %.1f s%s\n%s", seconds,
              g_signals.load() > 0 ? " (stopped by a signal)" : "", view.summary().c_str());
  if (!swarm.tracker().succeeded())
    std::printf("the tracker FAILED (%s); its log: %s\n",
                swarm.tracker().exit_description().c_str(), swarm.tracker().log_file().c_str());
  // Stopped early, peers may hold different rounds; otherwise they must agree.
  return ok && (g_signals.load() > 0 || view.same_state()) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loco-swarm: a tracker and N peers training together on this machine (loopback)"};
  app.name("loco-swarm");
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  SwarmOptions options;
  add_swarm_options(app, options);
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;
  loco::init_logging(common.log_level, common.log_format);

  // The first signal stops the peers (they leave the run) and then the tracker; a second kills.
  std::signal(SIGINT, count_signal);
  std::signal(SIGTERM, count_signal);
  try {
    return run_swarm(options);
  } catch (const loco::Error& e) {
    spdlog::error("loco-swarm: {}", e.what());
    return 1;
  }
}
