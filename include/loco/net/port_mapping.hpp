#pragma once
// A TCP port mapping on the home router, so that a volunteer behind a router that offers one is
// reachable without forwarding a port by hand (docs/VOLUNTEER.md). Two protocols, the ones
// BitTorrent and Bitcoin clients use: NAT-PMP/PCP (natpmp_mapping.hpp, libnatpmp), one UDP
// exchange with the default gateway, tried first; then UPnP-IGD (upnp_mapping.hpp, libminiupnpc),
// a multicast discovery and SOAP requests. A mapping has a lease its owner renews (renew(), every
// lease / 2) and is removed when it is destroyed.
//
// Every call blocks on the router, each protocol for at most discover_timeout when nothing
// answers. A router that offers neither, refuses, or answers with a private external address (a
// second NAT above it: mapping this one does not make the peer reachable) gives no mapping and
// the reasons to log.
// Threads: one at a time.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "loco/core/time.hpp"

namespace loco::net {

struct PortMappingConfig {
  Duration discover_timeout = std::chrono::seconds(2);
  Duration lease = std::chrono::hours(1);  // 0 asks for a permanent mapping (UPnP)
  std::string description = "loco-peer";
};

class PortMapping {
 public:
  virtual ~PortMapping() = default;  // a mapping's destructor removes it (best effort)
  // host:port where the others reach this peer through the router.
  virtual const std::string& external_address() const = 0;
  virtual Duration lease() const = 0;  // 0: permanent, nothing to renew
  // Asks for the mapping again (a new lease). False, with the reason, when the router refused.
  virtual bool renew(std::string& why) = 0;
  virtual const char* protocol() const = 0;  // "NAT-PMP", "UPnP"
};

struct PortMappingResult {
  std::unique_ptr<PortMapping> mapping;  // null: none, `why` says why
  std::string why;
};

// Maps TCP `port` on the router's external address to this host's `port`: NAT-PMP/PCP first,
// then UPnP-IGD; with neither, the reasons of both.
PortMappingResult open_port_mapping(std::uint16_t port, const PortMappingConfig& config);

// Why `external`, the address a router says it has outside, makes a mapping useless (not an IP
// address, or a private or carrier-grade NAT one: another NAT is above the router); nothing when
// it is usable.
std::optional<std::string> external_address_problem(const std::string& external);

}  // namespace loco::net
