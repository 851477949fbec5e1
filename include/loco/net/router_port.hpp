#pragma once
// loco-peer's listening port, mapped on the home router (port_mapping.hpp) for as long as the
// peer runs: the lease renewed every half lease on the io_context, the mapping removed by stop().
// Nothing is mapped for a peer that listens on a loopback address (a local swarm: there is no
// router), and when the router offers no mapping the peer goes on without one (the tracker's probe
// then finds it unreachable, and it dials out: docs/VOLUNTEER.md). What happened is logged.
// Threads: every call on the io_context's thread. Opening the mapping blocks it (up to
// discover_timeout per protocol, at start); each renewal asks the router from a thread of its own.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>
#include <thread>

#include "loco/net/port_mapping.hpp"

namespace loco::net {

class RouterPort : public std::enable_shared_from_this<RouterPort> {
 public:
  // Null when nothing was mapped (the reason is logged).
  static std::shared_ptr<RouterPort> open(boost::asio::io_context& io,
                                          const boost::asio::ip::tcp::endpoint& listening,
                                          const PortMappingConfig& config = {});
  // host:port where the others reach this peer through the router.
  const std::string& external_address() const { return mapping_->external_address(); }
  void stop();

  struct Private;
  RouterPort(Private, boost::asio::io_context& io, std::unique_ptr<PortMapping> mapping);
  ~RouterPort();
  RouterPort(const RouterPort&) = delete;
  RouterPort& operator=(const RouterPort&) = delete;

 private:
  void arm_renewal();

  boost::asio::steady_timer renewal_;
  std::unique_ptr<PortMapping> mapping_;
  std::thread renewer_;  // the renewal under way, if any
};

}  // namespace loco::net
