#pragma once
// A TCP port mapping by UPnP-IGD (libminiupnpc; port_mapping.hpp says when it is used): the same
// external port as the internal one, with a lease (or a permanent mapping where the router
// supports only those). Threads: one at a time; every call blocks on the router.

#include <cstdint>
#include <memory>
#include <string>

#include "loco/net/port_mapping.hpp"

namespace loco::net {

// Discovers the router (for up to config.discover_timeout) and maps TCP `port`.
PortMappingResult open_upnp_mapping(std::uint16_t port, const PortMappingConfig& config);

class UpnpPortMapping final : public PortMapping {
 public:
  struct Router;  // the IGD's URLs and service (libminiupnpc's structures)
  UpnpPortMapping(std::unique_ptr<Router> router, std::uint16_t port, PortMappingConfig config);
  ~UpnpPortMapping() override;
  UpnpPortMapping(const UpnpPortMapping&) = delete;
  UpnpPortMapping& operator=(const UpnpPortMapping&) = delete;

  const std::string& external_address() const override { return external_address_; }
  Duration lease() const override { return config_.lease; }
  bool renew(std::string& why) override { return add(why); }
  const char* protocol() const override { return "UPnP"; }

  // AddPortMapping with the lease; falls back to a permanent one where only those are supported.
  bool add(std::string& why);
  void set_external_address(std::string address) { external_address_ = std::move(address); }

 private:
  std::unique_ptr<Router> router_;
  std::uint16_t port_;
  PortMappingConfig config_;
  std::string external_address_;
};

}  // namespace loco::net
