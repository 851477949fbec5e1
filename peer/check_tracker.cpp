#include "check_tracker.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <optional>

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

}  // namespace

int check_tracker(const TrackerLinkOptions& options) {
  try {
    const auto address = parse_option("--tracker.address", options.tracker_address,
                                      [](const std::string& v) { return net::parse_host_port(v); });
    const auto pinned =
        parse_option("--tracker.public-key", options.tracker_public_key,
                     [](const std::string& v) { return secure::parse_public_key(v); });
    if (options.run_id.empty()) throw Error(ErrorCategory::config, "--run.id: not set");
    const auto key = parse_option("--peer.key", options.key_file, [](const std::string& v) {
      return secure::read_key_file(v, secure::KeyOwner::peer);
    });

    boost::asio::io_context io;
    const auto started = std::chrono::steady_clock::now();
    std::optional<std::chrono::steady_clock::duration> took;
    std::optional<Error> failure;
    std::shared_ptr<net::StreamBundle> tracker;  // set before io.run() calls any handler
    tracker = net::StreamBundle::connect(
        io, net::resolve(io, address), net::BundleConfig{},
        net::ChannelSetup{.identity = &key,
                          .config = secure::ChannelConfig{.run_id = options.run_id},
                          .accept = [pinned](const secure::PublicKey& k) { return k == pinned; },
                          .peer_label = fmt::format("the tracker at {}", net::to_string(address))},
        net::BundleHandlers{
            .on_ready =
                [&] {
                  took = std::chrono::steady_clock::now() - started;
                  tracker->close();
                },
            .on_chunk = {},
            .on_closed =
                [&](const Error* error) {
                  if (error != nullptr) failure = *error;
                },
        });
    io.run();
    if (failure) throw *failure;
    if (!took) throw Error(ErrorCategory::network, "the tracker closed the connection");
    std::printf("tracker %s at %s: pinned identity verified for run %s (handshake %lld ms)\n",
                secure::short_id(pinned).c_str(), net::to_string(address).c_str(),
                options.run_id.c_str(),
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(*took).count()));
    return 0;
  } catch (const Error& e) {
    spdlog::error("check-tracker: {}", e.what());
    return 1;
  }
}

}  // namespace loco::peer
