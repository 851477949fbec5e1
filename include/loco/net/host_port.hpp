#pragma once
// A network address as users write it: "tracker.example.org:7700", "10.0.0.5:7700",
// "[2001:db8::1]:7700". Parsed strictly (a port from 1 to 65535 is required; "0" only where
// `allow_any_port`, for a listener that takes any free port), resolved with the system resolver.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loco::net {

struct HostPort {
  std::string host;  // a name, an IPv4 address, or an IPv6 address without brackets
  std::uint16_t port = 0;
};

// Throws Error(config) quoting `text` and saying what is wrong, with an example.
HostPort parse_host_port(std::string_view text, bool allow_any_port = false);

// "a:1,b:2": one address or several (tracker replicas), each as parse_host_port; at least one.
std::vector<HostPort> parse_host_port_list(std::string_view text);

std::string to_string(const HostPort& address);  // brackets around IPv6

// The first address the resolver gives; throws Error(network) naming the host.
boost::asio::ip::tcp::endpoint resolve(boost::asio::io_context& io, const HostPort& address);

}  // namespace loco::net
