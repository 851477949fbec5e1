// Addresses as users write them: accepted forms, and each mistake refused with a reason.

#include "loco/net/host_port.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"

namespace loco::net {
namespace {

std::string error_of(std::string_view text, bool allow_any_port = false) {
  try {
    parse_host_port(text, allow_any_port);
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    return e.what();
  }
  return "no error";
}

TEST(HostPort, ParsesNamesAndAddresses) {
  const HostPort name = parse_host_port("tracker.example.org:7700");
  EXPECT_EQ(name.host, "tracker.example.org");
  EXPECT_EQ(name.port, 7700);
  EXPECT_EQ(parse_host_port("10.0.0.5:1").host, "10.0.0.5");
  const HostPort v6 = parse_host_port("[2001:db8::1]:65535");
  EXPECT_EQ(v6.host, "2001:db8::1");
  EXPECT_EQ(v6.port, 65535);
  EXPECT_EQ(to_string(v6), "[2001:db8::1]:65535");
  EXPECT_EQ(parse_host_port("127.0.0.1:0", true).port, 0);
}

TEST(HostPort, ListsOneAddressOrSeveralReplicas) {
  EXPECT_EQ(parse_host_port_list("10.0.0.5:7700").size(), 1u);
  const auto replicas = parse_host_port_list("a.example.org:7700,[2001:db8::1]:7701,10.0.0.7:7702");
  ASSERT_EQ(replicas.size(), 3u);
  EXPECT_EQ(replicas[1].host, "2001:db8::1");
  EXPECT_EQ(replicas[2].port, 7702);
  EXPECT_THROW(parse_host_port_list(""), Error);
  EXPECT_THROW(parse_host_port_list("a:1,"), Error);
  EXPECT_THROW(parse_host_port_list("a:1,,b:2"), Error);
  std::string many = "h:1";
  for (int i = 0; i < 16; ++i) many += ",h:1";
  EXPECT_THROW(parse_host_port_list(many), Error);  // 17: over the cap
}

TEST(HostPort, RefusesMistakesWithAReason) {
  EXPECT_NE(error_of("tracker.example.org").find("no port"), std::string::npos);
  EXPECT_NE(error_of(":7700").find("no host"), std::string::npos);
  EXPECT_NE(error_of("host:").find("1 to 65535"), std::string::npos);
  EXPECT_NE(error_of("host:65536").find("1 to 65535"), std::string::npos);
  EXPECT_NE(error_of("host:77a").find("1 to 65535"), std::string::npos);
  EXPECT_NE(error_of("host:0").find("1 to 65535"), std::string::npos);
  EXPECT_NE(error_of("2001:db8::1:7700").find("brackets"), std::string::npos);
  EXPECT_NE(error_of("[2001:db8::1:7700").find("closing"), std::string::npos);
  EXPECT_NE(error_of("[nonsense]:7700").find("IPv6"), std::string::npos);
  EXPECT_NE(error_of("host name:7700").find("letters"), std::string::npos);
  EXPECT_NE(error_of("host:7700").find("no error"), std::string::npos);
}

TEST(HostPort, ResolvesLoopback) {
  boost::asio::io_context io;
  const auto endpoint = resolve(io, parse_host_port("127.0.0.1:7700"));
  EXPECT_TRUE(endpoint.address().is_loopback());
  EXPECT_EQ(endpoint.port(), 7700);
}

}  // namespace
}  // namespace loco::net
