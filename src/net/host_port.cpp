#include "loco/net/host_port.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <charconv>

#include "loco/core/error.hpp"

namespace loco::net {
namespace {

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw Error(ErrorCategory::config,
              fmt::format("\"{}\": {}; write host:port, e.g. \"tracker.example.org:7700\", "
                          "\"10.0.0.5:7700\" or \"[2001:db8::1]:7700\"",
                          text, why));
}

bool is_host_name(std::string_view host) {
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.';
  });
}

}  // namespace

HostPort parse_host_port(std::string_view text, bool allow_any_port) {
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) bad(text, "an IPv6 address needs its closing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') bad(text, "no port after the ']'");
    port = text.substr(close + 2);
    boost::system::error_code error;
    boost::asio::ip::make_address_v6(std::string(host), error);
    if (error) bad(text, "not an IPv6 address between the brackets");
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) bad(text, "no port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      bad(text, "an IPv6 address must be written in brackets");
    if (!is_host_name(host)) bad(text, "the host may only have letters, digits, '-' and '.'");
  }
  if (host.empty()) bad(text, "no host");
  unsigned value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || error != std::errc{} || end != port.data() + port.size() || value > 65535)
    bad(text, "the port must be a number from 1 to 65535");
  if (value == 0 && !allow_any_port) bad(text, "the port must be a number from 1 to 65535");
  return HostPort{std::string(host), static_cast<std::uint16_t>(value)};
}

std::vector<HostPort> parse_host_port_list(std::string_view text) {
  constexpr std::size_t kMaxAddresses = 16;  // replicas are a handful
  std::vector<HostPort> out;
  std::string_view rest = text;
  do {
    const std::size_t comma = rest.find(',');
    if (out.size() == kMaxAddresses)
      throw Error(ErrorCategory::config,
                  fmt::format("'{}': more than {} addresses", text, kMaxAddresses));
    out.push_back(parse_host_port(rest.substr(0, comma)));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (comma != std::string_view::npos && rest.empty()) bad(text, "nothing after the last ','");
  } while (!rest.empty());
  return out;
}

std::string to_string(const HostPort& address) {
  if (address.host.find(':') != std::string::npos)
    return fmt::format("[{}]:{}", address.host, address.port);
  return fmt::format("{}:{}", address.host, address.port);
}

boost::asio::ip::tcp::endpoint resolve(boost::asio::io_context& io, const HostPort& address) {
  boost::asio::ip::tcp::resolver resolver(io);
  boost::system::error_code error;
  const auto results = resolver.resolve(address.host, std::to_string(address.port),
                                        boost::asio::ip::tcp::resolver::numeric_service, error);
  if (error || results.empty())
    throw Error(ErrorCategory::network, fmt::format("cannot resolve {}: {}", to_string(address),
                                                    error ? error.message() : "no address"));
  return results.begin()->endpoint();
}

}  // namespace loco::net
