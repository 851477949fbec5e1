#include "check_tracker.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/net/host_port.hpp"
#include "loco/net/stream_bundle.hpp"
#include "loco/secure/identity.hpp"

namespace loco::peer {
namespace {

// Names the option in front of what parsing it said.
template <typename Parse>
auto parse_option(const char* option, const std::string& value, Parse&& parse) {
  if (value.empty()) throw Error(ErrorCategory::config, fmt::format("{}: not set", option));
  try {
    return parse(value);
  } catch (const Error& e) {
    throw Error(e.category(), fmt::format("{}: {}", option, e.message()));
  }
}

struct Target {
  std::string run_id;
  secure::PublicKey pinned;
  const secure::KeyPair* key = nullptr;
};

// One handshake with the tracker at `address`: how long it took, or why it failed and how far it
// got (a refused TCP connection is what a follower replica gives: it does not listen).
struct Answer {
  std::optional<std::chrono::steady_clock::duration> took;
  std::optional<Error> failure;
  bool connected = false;  // the TCP connection was made
};

Answer knock(const Target& target, const net::HostPort& address) {
  boost::asio::io_context io;
  const auto started = std::chrono::steady_clock::now();
  Answer answer;
  std::shared_ptr<net::StreamBundle> tracker;  // set before io.run() calls any handler
  tracker = net::StreamBundle::connect(
      io, net::resolve(io, address), net::BundleConfig{},
      net::ChannelSetup{
          .identity = target.key,
          .config = secure::ChannelConfig{.run_id = target.run_id},
          .accept = [pinned = target.pinned](const secure::PublicKey& k) { return k == pinned; },
          .peer_label = fmt::format("the tracker at {}", net::to_string(address))},
      net::BundleHandlers{
          .on_ready =
              [&] {
                answer.took = std::chrono::steady_clock::now() - started;
                tracker->close();
              },
          .on_chunk = {},
          .on_closed =
              [&](const Error* error) {
                if (error != nullptr) answer.failure = *error;
              },
      });
  io.run();
  answer.connected = tracker->progress() != net::StreamBundle::Progress::connecting;
  if (!answer.took && !answer.failure)
    answer.failure = Error(ErrorCategory::network, "the tracker closed the connection");
  return answer;
}

void print_verified(const Target& target, const net::HostPort& address,
                    std::chrono::steady_clock::duration took, const char* tail) {
  std::printf(
      "tracker %s at %s: pinned identity verified for run %s (handshake %lld ms)%s\n",
      secure::short_id(target.pinned).c_str(), net::to_string(address).c_str(),
      target.run_id.c_str(),
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
      tail);
}

// Replicas (docs/TRACKER.md, "Running replicas"): only the leader listens, so exactly one
// address answers; a refused connection elsewhere is a follower. Fails when none answers, more
// than one does, or an address that did answer showed another key or run.
int check_replicas(const Target& target, const std::vector<net::HostPort>& addresses) {
  std::vector<std::string> leaders;
  bool wrong = false;
  for (const net::HostPort& address : addresses) {
    std::optional<Answer> answer;
    try {
      answer = knock(target, address);
    } catch (const Error& e) {  // a name that does not resolve
      spdlog::error("check-tracker: {}", e.what());
      wrong = true;
      continue;
    }
    if (answer->took) {
      print_verified(target, address, *answer->took, ": it leads");
      leaders.push_back(net::to_string(address));
    } else if (!answer->connected) {
      std::printf("no answer at %s (%s): expected of a follower replica, which does not listen\n",
                  net::to_string(address).c_str(), answer->failure->message().c_str());
    } else {
      spdlog::error("check-tracker: {}", answer->failure->what());
      wrong = true;
    }
  }
  if (leaders.size() == 1 && !wrong) {
    std::printf("%zu replicas: %s leads, the others do not listen\n", addresses.size(),
                leaders[0].c_str());
    return 0;
  }
  if (leaders.empty() && !wrong)  // else the address that showed another key or run said why
    spdlog::error(
        "check-tracker: no replica of the {} answered: none leads (an election under "
        "way, or etcd has no majority), or check [tracker] address",
        addresses.size());
  else if (leaders.size() > 1)
    spdlog::error(
        "check-tracker: {} replicas answered ({}); only the leading one listens: a "
        "deposed leader that has not noticed yet, or an address listed twice",
        leaders.size(), fmt::join(leaders, ", "));
  return 1;
}

}  // namespace

int check_tracker(const TrackerLinkOptions& options) {
  try {
    const auto addresses =
        parse_option("--tracker.address", options.tracker_address,
                     [](const std::string& v) { return net::parse_host_port_list(v); });
    Target target{
        .run_id = options.run_id,
        .pinned = parse_option("--tracker.public-key", options.tracker_public_key,
                               [](const std::string& v) { return secure::parse_public_key(v); })};
    if (options.run_id.empty()) throw Error(ErrorCategory::config, "--run.id: not set");
    const auto key = parse_option("--peer.key", options.key_file, [](const std::string& v) {
      return secure::read_key_file(v, secure::KeyOwner::peer);
    });
    target.key = &key;
    if (addresses.size() > 1) return check_replicas(target, addresses);
    const Answer answer = knock(target, addresses[0]);
    if (answer.failure) throw *answer.failure;
    print_verified(target, addresses[0], *answer.took, "");
    return 0;
  } catch (const Error& e) {
    spdlog::error("check-tracker: {}", e.what());
    return 1;
  }
}

}  // namespace loco::peer
