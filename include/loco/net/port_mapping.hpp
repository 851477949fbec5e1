#pragma once
// A TCP port mapping on the home router, by UPnP-IGD (libminiupnpc, the client BitTorrent and
// Bitcoin clients use): loco-peer asks the router to forward its listening port, so that a
// volunteer behind a router that offers UPnP is reachable without forwarding a port by hand
// (docs/VOLUNTEER.md). The mapping asks for the same external port as the internal one, with a
// lease the owner renews (renew(), every lease / 2) and removes when it is destroyed.
//
// Every call blocks on the router (discovery waits up to discover_timeout; each SOAP request is
// one short HTTP exchange on the LAN). A router that offers none, refuses, or answers with a
// private external address (a second NAT above it: mapping this one does not make the peer
// reachable) gives no mapping and a reason to log.
// Threads: one at a time.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "loco/core/time.hpp"

namespace loco::net {

struct PortMappingConfig {
  Duration discover_timeout = std::chrono::seconds(2);
  Duration lease = std::chrono::hours(1);  // 0 asks for a permanent mapping
  std::string description = "loco-peer";
};

class UpnpPortMapping {
 public:
  struct Result {
    std::unique_ptr<UpnpPortMapping> mapping;  // null: none, `why` says why
    std::string why;
  };
  // Maps TCP `port` on the router's external address to this host's `port`.
  static Result open(std::uint16_t port, const PortMappingConfig& config);

  // host:port where the others reach this peer through the router.
  const std::string& external_address() const { return external_address_; }
  Duration lease() const { return config_.lease; }
  // Asks for the mapping again (a new lease). False, with the reason, when the router refused.
  bool renew(std::string& why);
  ~UpnpPortMapping();  // removes the mapping (best effort)
  UpnpPortMapping(const UpnpPortMapping&) = delete;
  UpnpPortMapping& operator=(const UpnpPortMapping&) = delete;

  struct Router;  // the IGD's URLs and service (libminiupnpc's structures)

 private:
  UpnpPortMapping(std::unique_ptr<Router> router, std::uint16_t port, PortMappingConfig config);
  // AddPortMapping with the lease; falls back to a permanent one where only those are supported.
  bool add(std::string& why);

  std::unique_ptr<Router> router_;
  std::uint16_t port_;
  PortMappingConfig config_;
  std::string external_address_;
};

}  // namespace loco::net
