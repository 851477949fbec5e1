// The status server over real sockets on 127.0.0.1: what it serves, what it refuses, and the
// bounds a public client meets (header size, no body, timeout, requests per connection, cap).

#include "tracker/status_http.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "http_harness.hpp"
#include "loco/core/error.hpp"
#include "sample_status.hpp"

namespace loco::test {
namespace {

using Limits = tracker::StatusHttpLimits;

tracker::StatusSource sample_source() {
  return [] { return sample_status(); };
}

// The connection ended without a response: closed or reset by the server, not the hang guard.
void expect_closed_by_server(const TestClient::Reply& reply) {
  EXPECT_TRUE(reply.error == http::error::end_of_stream ||
              reply.error == asio::error::connection_reset)
      << reply.error.message();
}

TEST(StatusHttpServer, ServesEveryRouteOnOneKeptAliveConnection) {
  std::atomic<int> calls = 0;
  ServerThread server(
      [&] {
        ++calls;
        return sample_status();
      },
      Limits{.status_max_age = std::chrono::hours(1)});
  TestClient client(server.endpoint());

  const auto page = client.get("/");
  ASSERT_FALSE(page.error) << page.error.message();
  EXPECT_EQ(page.response.result(), http::status::ok);
  EXPECT_NE(page.response.body().find("loco tracker"), std::string::npos);

  const auto status = client.get("/status");
  ASSERT_FALSE(status.error) << status.error.message();
  EXPECT_EQ(status.response.result(), http::status::ok);
  EXPECT_NE(status.response.body().find(R"("peer_id":"a41d09e5c3b8")"), std::string::npos);
  EXPECT_TRUE(status.response.keep_alive());

  const auto metrics = client.get("/metrics");
  ASSERT_FALSE(metrics.error) << metrics.error.message();
  EXPECT_NE(metrics.response.body().find("loco_tracker_members 3\n"), std::string::npos);

  const auto head = client.request(http::verb::head, "/status");
  ASSERT_FALSE(head.error) << head.error.message();
  EXPECT_EQ(head.response[http::field::content_length],
            std::to_string(status.response.body().size()));
  EXPECT_EQ(calls, 2) << "/status rendered once, /metrics once: HEAD reused the JSON";
  EXPECT_EQ(server.connections(), 1u);
}

TEST(StatusHttpServer, UnknownPathIs404AndOtherMethodsAre405) {
  ServerThread server(sample_source());
  TestClient client(server.endpoint());
  const auto missing = client.get("/admin");
  ASSERT_FALSE(missing.error) << missing.error.message();
  EXPECT_EQ(missing.response.result(), http::status::not_found);
  const auto deleted = client.request(http::verb::delete_, "/status");
  ASSERT_FALSE(deleted.error) << deleted.error.message();
  EXPECT_EQ(deleted.response.result(), http::status::method_not_allowed);
  EXPECT_EQ(deleted.response[http::field::allow], "GET, HEAD");
  const auto after = client.get("/status");  // the connection is still good
  ASSERT_FALSE(after.error) << after.error.message();
  EXPECT_EQ(after.response.result(), http::status::ok);
}

TEST(StatusHttpServer, OversizedHeadersAreRefusedWith431) {
  ServerThread server(sample_source());
  TestClient client(server.endpoint());
  client.send("GET /status HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(9000, 'a') +
              "\r\n\r\n");
  const auto refused = client.read_response();
  ASSERT_FALSE(refused.error) << refused.error.message();
  EXPECT_EQ(refused.response.result(), http::status::request_header_fields_too_large);
  EXPECT_FALSE(refused.response.keep_alive());
  expect_closed_by_server(client.read_response());
}

TEST(StatusHttpServer, HeadersJustUnderTheLimitAreServed) {
  ServerThread server(sample_source());
  TestClient client(server.endpoint());
  const std::string start = "GET /status HTTP/1.1\r\nHost: x\r\nX-Padding: ";
  client.send(start + std::string(8 * 1024 - start.size() - 4, 'a') + "\r\n\r\n");
  const auto served = client.read_response();
  ASSERT_FALSE(served.error) << served.error.message();
  EXPECT_EQ(served.response.result(), http::status::ok);
}

TEST(StatusHttpServer, ARequestBodyIsRefusedWith413) {
  ServerThread server(sample_source());
  TestClient client(server.endpoint());
  client.send("GET /status HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  const auto refused = client.read_response();
  ASSERT_FALSE(refused.error) << refused.error.message();
  EXPECT_EQ(refused.response.result(), http::status::payload_too_large);
  expect_closed_by_server(client.read_response());
}

TEST(StatusHttpServer, GarbageIsRefusedWith400) {
  ServerThread server(sample_source());
  TestClient client(server.endpoint());
  client.send("\x16\x03\x01\x02\x00 not http\r\n\r\n");  // e.g. a TLS hello on the plain port
  const auto refused = client.read_response();
  ASSERT_FALSE(refused.error) << refused.error.message();
  EXPECT_EQ(refused.response.result(), http::status::bad_request);
  expect_closed_by_server(client.read_response());
}

TEST(StatusHttpServer, KeepAliveEndsAfterTheRequestLimit) {
  ServerThread server(sample_source(), Limits{.max_requests_per_connection = 2});
  TestClient client(server.endpoint());
  const auto first = client.get("/status");
  ASSERT_FALSE(first.error) << first.error.message();
  EXPECT_TRUE(first.response.keep_alive());
  const auto second = client.get("/status");
  ASSERT_FALSE(second.error) << second.error.message();
  EXPECT_FALSE(second.response.keep_alive());
  expect_closed_by_server(client.read_response());
}

TEST(StatusHttpServer, ASilentClientIsClosedAfterTheTimeout) {
  ServerThread server(sample_source(), Limits{.io_timeout = std::chrono::milliseconds(200)});
  TestClient idle(server.endpoint());
  expect_closed_by_server(idle.read_response());
  TestClient slow(server.endpoint());  // starts a request and never finishes it
  slow.send("GET /status HTTP/1.1\r\n");
  expect_closed_by_server(slow.read_response());
}

// A full server makes room for a newcomer by closing the oldest connection of the address holding
// the most (finding 7 of the strangers' review: 64 held connections took the page down).
TEST(StatusHttpServer, ANewcomerToAFullServerClosesTheOldestOfTheAddressHoldingTheMost) {
  ServerThread server(sample_source(), Limits{.max_connections = 3});
  TestClient oldest(server.endpoint(), "127.0.0.2");
  ASSERT_FALSE(oldest.get("/status").error);
  TestClient newer(server.endpoint(), "127.0.0.2");
  ASSERT_FALSE(newer.get("/status").error);
  TestClient other(server.endpoint(), "127.0.0.3");
  ASSERT_FALSE(other.get("/status").error);
  ASSERT_EQ(server.connections(), 3u);

  TestClient visitor(server.endpoint());
  const auto served = visitor.get("/status");
  ASSERT_FALSE(served.error) << served.error.message();
  EXPECT_EQ(served.response.result(), http::status::ok);
  expect_closed_by_server(oldest.read_response());
  EXPECT_FALSE(newer.get("/status").error);
  EXPECT_FALSE(other.get("/status").error);
  EXPECT_EQ(server.connections(), 3u);
}

// One client holding connections open takes at most its address's share of the server, so the
// others are still served. Every client here comes from 127.0.0.1: the third is past that cap.
TEST(StatusHttpServer, ConnectionsPastTheCapOfOneAddressAreClosedAtOnce) {
  ServerThread server(sample_source(),
                      Limits{.max_connections = 8, .max_connections_per_address = 2});
  TestClient first(server.endpoint());
  TestClient second(server.endpoint());
  ASSERT_FALSE(first.get("/status").error);
  ASSERT_FALSE(second.get("/status").error);
  TestClient third(server.endpoint());
  expect_closed_by_server(third.read_response());
  EXPECT_EQ(server.connections(), 2u) << "the total cap is 8: the address's cap closed it";
}

TEST(StatusHttpServer, StopClosesOpenConnections) {
  ServerThread server(sample_source());
  TestClient client(server.endpoint());
  ASSERT_FALSE(client.get("/status").error);
  server.stop();
  expect_closed_by_server(client.read_response());
  EXPECT_TRUE(server.wait_for_connections(0));
}

TEST(StatusHttpServer, ABusyPortIsAnIoError) {
  ServerThread server(sample_source());
  asio::io_context io;
  EXPECT_THROW(tracker::StatusHttpServer::create(io, server.endpoint(), sample_source()), Error);
}

}  // namespace
}  // namespace loco::test
