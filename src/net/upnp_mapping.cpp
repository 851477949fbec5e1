#include "loco/net/upnp_mapping.hpp"

#include <fmt/format.h>
#include <miniupnpc/miniupnpc.h>
#include <miniupnpc/upnpcommands.h>
#include <miniupnpc/upnperrors.h>

#include <chrono>
#include <string>

namespace loco::net {
namespace {

constexpr int kOnlyPermanentLeasesSupported = 725;

std::string upnp_error(int code) {
  const char* text = strupnperror(code);
  return text != nullptr ? fmt::format("{} ({})", text, code) : fmt::format("error {}", code);
}

}  // namespace

struct UpnpPortMapping::Router {
  UPNPUrls urls{};
  IGDdatas data{};
  std::string lan_address;  // this host's address on the router's LAN
  ~Router() { FreeUPNPUrls(&urls); }
};

PortMappingResult open_upnp_mapping(std::uint16_t port, const PortMappingConfig& config) {
  int error = 0;
  // upnpDiscover asks for kSearchedTypes device and service types one after another, each for up
  // to its delay: the whole discovery stays within discover_timeout.
  constexpr int kSearchedTypes = 4;
  const int total_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(config.discover_timeout).count());
  UPNPDev* devices =
      upnpDiscover(total_ms / kSearchedTypes, nullptr, nullptr, UPNP_LOCAL_PORT_ANY, 0, 2, &error);
  if (devices == nullptr)
    return {nullptr, fmt::format("no UPnP router answered within {} ms", total_ms)};
  auto router = std::make_unique<UpnpPortMapping::Router>();
  char lan[64] = {};
  const int found = UPNP_GetValidIGD(devices, &router->urls, &router->data, lan, sizeof lan);
  freeUPNPDevlist(devices);
  if (found != 1)
    return {nullptr, found == 0 ? "no UPnP Internet gateway found"
                                : "the UPnP gateway found is not connected to the internet"};
  router->lan_address = lan;
  char external[64] = {};
  if (const int r = UPNP_GetExternalIPAddress(router->urls.controlURL,
                                              router->data.first.servicetype, external);
      r != UPNPCOMMAND_SUCCESS || external[0] == '\0')
    return {nullptr, "the router did not say its external address: " + upnp_error(r)};
  if (auto problem = external_address_problem(external)) return {nullptr, std::move(*problem)};
  auto mapping = std::make_unique<UpnpPortMapping>(std::move(router), port, config);
  std::string why;
  if (!mapping->add(why)) return {nullptr, why};
  mapping->set_external_address(fmt::format("{}:{}", external, port));
  return {std::move(mapping), {}};
}

UpnpPortMapping::UpnpPortMapping(std::unique_ptr<Router> router, std::uint16_t port,
                                 PortMappingConfig config)
    : router_(std::move(router)), port_(port), config_(std::move(config)) {}

bool UpnpPortMapping::add(std::string& why) {
  const std::string port = std::to_string(port_);
  const auto request = [&](Duration lease) {
    const std::string seconds =
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(lease).count());
    return UPNP_AddPortMapping(router_->urls.controlURL, router_->data.first.servicetype,
                               port.c_str(), port.c_str(), router_->lan_address.c_str(),
                               config_.description.c_str(), "TCP", nullptr, seconds.c_str());
  };
  int r = request(config_.lease);
  if (r == kOnlyPermanentLeasesSupported) {
    config_.lease = Duration{0};
    r = request(config_.lease);
  }
  if (r == UPNPCOMMAND_SUCCESS) return true;
  why = fmt::format("the router refused to map TCP port {} to {}: {}", port_, router_->lan_address,
                    upnp_error(r));
  return false;
}

UpnpPortMapping::~UpnpPortMapping() {
  const std::string port = std::to_string(port_);
  UPNP_DeletePortMapping(router_->urls.controlURL, router_->data.first.servicetype, port.c_str(),
                         "TCP", nullptr);
}

}  // namespace loco::net
