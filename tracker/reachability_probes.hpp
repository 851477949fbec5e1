#pragma once
// The Asio side of the tracker's reachability probes (proto/tracker_core.hpp, "Reachability"):
// for each probe the core asks for, one stream bundle to the peer's registered address that must
// complete the secure channel's handshake as that peer's key and be welcomed, within `timeout`.
// The core decides when to probe and what the outcome means; this only dials. Only numeric
// addresses are dialled (a name would make the tracker query a resolver a peer chose, and block
// its thread while it answers): a peer that registers a name is reported unreached.
// Threads: everything on the io_context's thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "loco/net/stream_bundle.hpp"
#include "loco/proto/tracker_core.hpp"

namespace loco::tracker {

class ReachabilityProbes {
 public:
  // `report` runs once per probe started, never from within start().
  using Report =
      std::function<void(const proto::Probe& probe, bool reached, const std::string& why)>;

  ReachabilityProbes(boost::asio::io_context& io, net::ChannelSetup setup, Duration timeout,
                     Report report);

  void start(const proto::Probe& probe);
  // Drops the probes under way (their sockets close; nothing is reported).
  void stop();
  std::size_t under_way() const { return under_way_.size(); }

 private:
  struct UnderWay {
    proto::Probe probe;
    std::shared_ptr<net::StreamBundle> bundle;
    std::unique_ptr<boost::asio::steady_timer> deadline;
  };

  void finish(std::uint64_t id, bool reached, const std::string& why);

  boost::asio::io_context& io_;
  net::ChannelSetup setup_;
  Duration timeout_;
  Report report_;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, UnderWay> under_way_;
};

}  // namespace loco::tracker
