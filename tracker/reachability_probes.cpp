#include "reachability_probes.hpp"

#include <fmt/format.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>

#include "loco/core/error.hpp"
#include "loco/net/host_port.hpp"

namespace loco::tracker {

ReachabilityProbes::ReachabilityProbes(boost::asio::io_context& io, net::ChannelSetup setup,
                                       Duration timeout, Report report)
    : io_(io), setup_(std::move(setup)), timeout_(timeout), report_(std::move(report)) {}

void ReachabilityProbes::start(const proto::Probe& probe) {
  const std::uint64_t id = next_id_++;
  UnderWay& u = under_way_[id];
  u.probe = probe;
  u.deadline = std::make_unique<boost::asio::steady_timer>(io_, to_steady(steady_now() + timeout_));
  u.deadline->async_wait([this, id](const boost::system::error_code& error) {
    if (!error) finish(id, false, "no answer in time");
  });
  boost::asio::ip::tcp::endpoint endpoint;
  try {
    const net::HostPort address = net::parse_host_port(probe.address);
    boost::system::error_code bad;
    const auto ip = boost::asio::ip::make_address(address.host, bad);
    if (bad)
      throw Error(ErrorCategory::config, "not a numeric address: the tracker dials no names");
    endpoint = boost::asio::ip::tcp::endpoint(ip, address.port);
  } catch (const Error& e) {
    boost::asio::post(io_, [this, id, why = std::string(e.what())] { finish(id, false, why); });
    return;
  }
  net::ChannelSetup setup = setup_;
  setup.accept = [peer = probe.peer](const secure::PublicKey& k) { return k == peer; };
  setup.config.handshake_timeout = timeout_;
  setup.peer_label = fmt::format("peer {} at {} (reachability probe)", secure::short_id(probe.peer),
                                 probe.address);
  u.bundle = net::StreamBundle::connect(
      io_, endpoint, net::BundleConfig{.streams = 1}, std::move(setup),
      net::BundleHandlers{
          .on_ready = [this, id] { finish(id, true, "welcomed"); },
          .on_chunk = [](const net::BundleChunk&) {},
          .on_closed =
              [this, id](const Error* error) {
                finish(id, false, error != nullptr ? error->what() : "it closed");
              },
      });
}

void ReachabilityProbes::finish(std::uint64_t id, bool reached, const std::string& why) {
  const auto it = under_way_.find(id);
  if (it == under_way_.end()) return;  // reported already
  UnderWay done = std::move(it->second);
  under_way_.erase(it);
  done.deadline->cancel();
  if (done.bundle) done.bundle->close();  // a welcomed probe ends cleanly; a failed one is over
  // The bundle may be inside one of its own callbacks: it is let go once that returns.
  boost::asio::post(io_, [bundle = std::move(done.bundle)] {});
  report_(done.probe, reached, why);
}

void ReachabilityProbes::stop() {
  for (auto& [id, u] : under_way_) u.deadline->cancel();
  under_way_.clear();
}

}  // namespace loco::tracker
