#include "loco/net/router_port.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

namespace loco::net {

struct RouterPort::Private {};

std::shared_ptr<RouterPort> RouterPort::open(boost::asio::io_context& io,
                                             const boost::asio::ip::tcp::endpoint& listening,
                                             const PortMappingConfig& config) {
  if (listening.address().is_loopback()) return nullptr;
  PortMappingResult mapped = open_port_mapping(listening.port(), config);
  if (!mapped.mapping) {
    spdlog::info("no port mapping on the router: {}", mapped.why);
    return nullptr;
  }
  spdlog::info(
      "the router forwards {} to this peer's port {} ({}, renewed every {} s)",
      mapped.mapping->external_address(), listening.port(), mapped.mapping->protocol(),
      std::chrono::duration_cast<std::chrono::seconds>(mapped.mapping->lease()).count() / 2);
  auto port = std::make_shared<RouterPort>(Private{}, io, std::move(mapped.mapping));
  port->arm_renewal();
  return port;
}

RouterPort::RouterPort(Private, boost::asio::io_context& io, std::unique_ptr<PortMapping> mapping)
    : renewal_(io), mapping_(std::move(mapping)) {}

void RouterPort::arm_renewal() {
  if (!mapping_ || mapping_->lease() == Duration{0}) return;  // permanent: nothing to renew
  renewal_.expires_after(mapping_->lease() / 2);
  renewal_.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (error || !self || !self->mapping_) return;
    // The router may take seconds to answer, or not answer: ask it from a thread of its own so
    // that the network thread goes on with the round. The mapping outlives the thread (stop() and
    // the destructor join it first).
    if (self->renewer_.joinable()) self->renewer_.join();
    self->renewer_ = std::thread(
        [mapping = self->mapping_.get(), weak, executor = self->renewal_.get_executor()] {
          std::string why;
          if (!mapping->renew(why)) spdlog::warn("the port mapping was not renewed: {}", why);
          // Renewed or not, the next renewal: a router that refused once may answer next time.
          boost::asio::post(executor, [weak] {
            if (auto port = weak.lock()) port->arm_renewal();
          });
        });
  });
}

void RouterPort::stop() {
  renewal_.cancel();
  if (renewer_.joinable()) renewer_.join();
  if (mapping_) spdlog::info("removing the port mapping {}", mapping_->external_address());
  mapping_.reset();  // removes it on the router
}

RouterPort::~RouterPort() {
  if (renewer_.joinable()) renewer_.join();
}

}  // namespace loco::net
