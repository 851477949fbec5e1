#pragma once
// A TCP port mapping by NAT-PMP (RFC 6886; libnatpmp; routers that speak PCP answer it too):
// UDP requests to the default gateway's port 5351, retried from 250 ms on, for at most
// config.discover_timeout each. The router may give another external port than the one asked
// for: external_address() says which. Removed by a request with lifetime 0 when destroyed.
// Threads: one at a time; every call blocks on the router.

#include <cstdint>
#include <memory>
#include <string>

#include "loco/net/port_mapping.hpp"

namespace loco::net {

// Asks the default gateway for its external address and to map TCP `port`.
PortMappingResult open_natpmp_mapping(std::uint16_t port, const PortMappingConfig& config);

class NatPmpMapping final : public PortMapping {
 public:
  struct Gateway;  // libnatpmp's state (its socket to the gateway)
  NatPmpMapping(std::unique_ptr<Gateway> gateway, std::uint16_t port, PortMappingConfig config);
  ~NatPmpMapping() override;
  NatPmpMapping(const NatPmpMapping&) = delete;
  NatPmpMapping& operator=(const NatPmpMapping&) = delete;

  const std::string& external_address() const override { return external_address_; }
  Duration lease() const override { return lease_; }
  bool renew(std::string& why) override { return map(why); }
  const char* protocol() const override { return "NAT-PMP"; }

  // Asks for the mapping (the external port it has, if any) for a lease; learns the lease given.
  bool map(std::string& why);
  void set_external_host(std::string host) { external_host_ = std::move(host); }

 private:
  std::unique_ptr<Gateway> gateway_;
  std::uint16_t port_;
  std::uint16_t external_port_ = 0;  // 0: none yet
  PortMappingConfig config_;
  Duration lease_;
  std::string external_host_;
  std::string external_address_;
};

}  // namespace loco::net
