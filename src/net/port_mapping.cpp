#include "loco/net/port_mapping.hpp"

#include <fmt/format.h>

#include <boost/asio/ip/address.hpp>

#include "loco/net/natpmp_mapping.hpp"
#include "loco/net/upnp_mapping.hpp"

namespace loco::net {

PortMappingResult open_port_mapping(std::uint16_t port, const PortMappingConfig& config) {
  PortMappingResult natpmp = open_natpmp_mapping(port, config);
  if (natpmp.mapping) return natpmp;
  PortMappingResult upnp = open_upnp_mapping(port, config);
  if (upnp.mapping) return upnp;
  return {nullptr, fmt::format("NAT-PMP: {}; UPnP: {}", natpmp.why, upnp.why)};
}

std::optional<std::string> external_address_problem(const std::string& external) {
  boost::system::error_code bad;
  const auto ip = boost::asio::ip::make_address(external, bad);
  if (bad) return fmt::format("the router's external address '{}' is not one", external);
  if (!ip.is_v4()) return std::nullopt;
  const auto b = ip.to_v4().to_bytes();
  const bool is_private = b[0] == 10 || (b[0] == 172 && (b[1] & 0xF0) == 16) ||
                          (b[0] == 192 && b[1] == 168) ||
                          (b[0] == 100 && (b[1] & 0xC0) == 64);  // carrier-grade NAT
  if (!is_private && !ip.is_unspecified()) return std::nullopt;
  return fmt::format(
      "the router's external address {} is private: another NAT is above it (a "
      "carrier's), which a mapping here does not open",
      external);
}

}  // namespace loco::net
