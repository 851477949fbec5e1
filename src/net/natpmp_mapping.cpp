#include "loco/net/natpmp_mapping.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <poll.h>

#define ENABLE_STRNATPMPERR
#include <natpmp.h>

#include <algorithm>
#include <chrono>
#include <string>

namespace loco::net {
namespace {

std::string natpmp_error(int code) {
  return fmt::format("{} ({})", strnatpmperr(code), code);
}

}  // namespace

struct NatPmpMapping::Gateway {
  natpmp_t state{};
  bool open = false;
  ~Gateway() {
    if (open) closenatpmp(&state);
  }

  // Reads the answer to the request just sent, letting libnatpmp resend it on its schedule, for
  // at most `patience`. NATPMP_TRYAGAIN when it did not come in time.
  int answer(natpmpresp_t& response, Duration patience) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
      const int r = readnatpmpresponseorretry(&state, &response);
      if (r != NATPMP_TRYAGAIN) return r;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return NATPMP_TRYAGAIN;
      timeval retry{};
      getnatpmprequesttimeout(&state, &retry);
      const long retry_ms = retry.tv_sec * 1000L + retry.tv_usec / 1000L;
      pollfd fd{.fd = state.s, .events = POLLIN, .revents = 0};
      ::poll(&fd, 1, static_cast<int>(std::clamp<long>(retry_ms, 1, left.count())));
    }
  }
};

PortMappingResult open_natpmp_mapping(std::uint16_t port, const PortMappingConfig& config) {
  auto gateway = std::make_unique<NatPmpMapping::Gateway>();
  if (const int r = initnatpmp(&gateway->state, 0, 0); r < 0)
    return {nullptr, "no gateway to ask: " + natpmp_error(r)};
  gateway->open = true;
  natpmpresp_t response{};
  if (const int r = sendpublicaddressrequest(&gateway->state); r < 0)
    return {nullptr, "the request did not go out: " + natpmp_error(r)};
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(config.discover_timeout).count());
  if (const int r = gateway->answer(response, config.discover_timeout); r < 0)
    return {nullptr, r == NATPMP_TRYAGAIN
                         ? fmt::format("the gateway did not answer within {} ms", ms)
                         : "the gateway did not say its external address: " + natpmp_error(r)};
  if (response.type != NATPMP_RESPTYPE_PUBLICADDRESS)
    return {nullptr, fmt::format("the gateway answered with a response of type {}", response.type)};
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &response.pnu.publicaddress.addr, text, sizeof text);
  if (auto problem = external_address_problem(text)) return {nullptr, std::move(*problem)};
  auto mapping = std::make_unique<NatPmpMapping>(std::move(gateway), port, config);
  mapping->set_external_host(text);
  std::string why;
  if (!mapping->map(why)) return {nullptr, why};
  return {std::move(mapping), {}};
}

NatPmpMapping::NatPmpMapping(std::unique_ptr<Gateway> gateway, std::uint16_t port,
                             PortMappingConfig config)
    : gateway_(std::move(gateway)),
      port_(port),
      config_(std::move(config)),
      lease_(config_.lease) {}

bool NatPmpMapping::map(std::string& why) {
  // NAT-PMP has no permanent mappings: 0 means "remove". Ask for an hour where none was set.
  const auto asked = config_.lease > Duration{0} ? config_.lease : Duration{std::chrono::hours(1)};
  const auto seconds =
      static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(asked).count());
  const std::uint16_t wanted = external_port_ != 0 ? external_port_ : port_;
  natpmpresp_t response{};
  int r = sendnewportmappingrequest(&gateway_->state, NATPMP_PROTOCOL_TCP, port_, wanted, seconds);
  if (r >= 0) r = gateway_->answer(response, config_.discover_timeout);
  if (r < 0) {
    why = fmt::format("the gateway did not map TCP port {}: {}", port_,
                      r == NATPMP_TRYAGAIN ? std::string("no answer") : natpmp_error(r));
    return false;
  }
  if (response.type != NATPMP_RESPTYPE_TCPPORTMAPPING ||
      response.pnu.newportmapping.privateport != port_ ||
      response.pnu.newportmapping.mappedpublicport == 0 ||
      response.pnu.newportmapping.lifetime == 0) {
    why = fmt::format("the gateway answered the mapping of TCP port {} with something else", port_);
    return false;
  }
  external_port_ = response.pnu.newportmapping.mappedpublicport;
  lease_ = std::chrono::seconds(response.pnu.newportmapping.lifetime);
  external_address_ = fmt::format("{}:{}", external_host_, external_port_);
  return true;
}

NatPmpMapping::~NatPmpMapping() {
  natpmpresp_t response{};
  if (sendnewportmappingrequest(&gateway_->state, NATPMP_PROTOCOL_TCP, port_, 0, 0) >= 0)
    gateway_->answer(response, config_.discover_timeout);
}

}  // namespace loco::net
