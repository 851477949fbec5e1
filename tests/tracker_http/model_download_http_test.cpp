// GET /model.safetensors over real sockets on loopback: a client that stops reading is cut off at
// the floor rate, and its place goes to the client first in line, which gets the whole file
// (model_download.hpp, status_http.cpp).

#include <gtest/gtest.h>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <string>
#include <vector>

#include "http_harness.hpp"
#include "sample_status.hpp"

namespace loco::test {
namespace {

using namespace std::chrono_literals;

// More than loopback's socket buffers take in for a client that never reads (about 3 MB), so the
// server's writes stall.
constexpr std::size_t kModelBytes = std::size_t{8} << 20;
constexpr std::string_view kAsk = "GET /model.safetensors HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

std::shared_ptr<const tracker::ModelDownload> big_model() {
  std::string bytes(kModelBytes, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  return std::make_shared<const tracker::ModelDownload>(
      tracker::ModelDownload{.round = 6, .filename = "run-round-6.safetensors", .bytes = bytes});
}

// Asks for the model from `source` with the smallest receive buffer the kernel allows, and reads
// only the status line: the download has begun, and the client reads no more.
tcp::socket stalled_download(asio::io_context& io, const tcp::endpoint& server,
                             const std::string& source) {
  tcp::socket socket(io);
  socket.open(tcp::v4());
  socket.set_option(asio::socket_base::receive_buffer_size(1));
  socket.bind({asio::ip::make_address(source), 0});
  socket.connect(server);
  asio::write(socket, asio::buffer(kAsk));
  std::string status_line(12, '\0');
  asio::read(socket, asio::buffer(status_line));
  EXPECT_EQ(status_line, "HTTP/1.1 200");
  return socket;
}

// The whole response to GET /model.safetensors from `source` (a model-sized body), read under
// the hang guard.
http::response<http::string_body> ask_for_the_model(const tcp::endpoint& server,
                                                    const std::string& source) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  stream.socket().open(tcp::v4());
  stream.socket().bind({asio::ip::make_address(source), 0});
  stream.expires_after(kHangGuard);
  stream.connect(server);
  asio::write(stream.socket(), asio::buffer(kAsk));
  http::response_parser<http::string_body> parser;
  parser.body_limit(2 * kModelBytes);
  beast::flat_buffer buffer;
  beast::error_code error;
  http::async_read(stream, buffer, parser,
                   [&](const beast::error_code& e, std::size_t) { error = e; });
  io.run();
  EXPECT_FALSE(error) << error.message();
  return parser.release();
}

TEST(ModelDownloadHttp, AReaderThatStopsIsCutOffAndTheNextInLineGetsTheWholeModel) {
  const auto model = big_model();
  ServerThread server([] { return sample_status(); },
                      tracker::StatusHttpLimits{.download = {.max_downloads = 1,
                                                             .hold = 60s,
                                                             .floor_bytes_per_second = 1 << 20,
                                                             .grace = 500ms}},
                      [model] { return model; });
  asio::io_context io;
  tcp::socket stalled = stalled_download(io, server.endpoint(), "127.0.0.3");

  // The only place is taken: the honest client is first in line, and asks until it has one.
  const auto first = ask_for_the_model(server.endpoint(), "127.0.0.2");
  EXPECT_EQ(first.result(), http::status::service_unavailable);
  EXPECT_NE(first.body().find("number 1 in line"), std::string::npos) << first.body();
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  http::response<http::string_body> reply = first;
  while (reply.result() != http::status::ok && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);  // a client's pace between asks, not a wait for an event
    reply = ask_for_the_model(server.endpoint(), "127.0.0.2");
  }
  ASSERT_EQ(reply.result(), http::status::ok) << reply.body();
  EXPECT_TRUE(reply.body() == model->bytes) << reply.body().size() << " bytes";
  // The stalled client's connection was closed by the server (the honest one closes its own).
  EXPECT_TRUE(server.wait_for_connections(0));
}

// A full server closes a connection for each newcomer; with one connection from each of many
// addresses, it closes the oldest that is not a download: the download under way goes on.
TEST(ModelDownloadHttp, AFloodFromManyAddressesDoesNotEndADownload) {
  const auto model = big_model();
  ServerThread server([] { return sample_status(); },
                      tracker::StatusHttpLimits{.max_connections = 3,
                                                .download = {.grace = std::chrono::minutes(1)}},
                      [model] { return model; });
  asio::io_context io;
  tcp::socket download = stalled_download(io, server.endpoint(), "127.0.0.2");
  std::vector<std::unique_ptr<TestClient>> flood;
  for (int i = 0; i < 8; ++i) {
    flood.push_back(
        std::make_unique<TestClient>(server.endpoint(), "127.0.1." + std::to_string(10 + i)));
    ASSERT_FALSE(flood.back()->get("/status").error);
  }
  EXPECT_EQ(server.connections(), 3u);
  // The download (its status line read) is whole: every byte of the model arrives.
  // (The server would cut it off after the minute's grace, which ends this loop.)
  std::string rest;
  std::vector<char> chunk(1 << 16);
  beast::error_code error;
  for (auto end = rest.find("\r\n\r\n");
       end == std::string::npos || rest.size() < end + 4 + kModelBytes;
       end = rest.find("\r\n\r\n")) {
    const std::size_t n = download.read_some(asio::buffer(chunk), error);
    if (error) break;
    rest.append(chunk.data(), n);
  }
  ASSERT_FALSE(error) << error.message() << " after " << rest.size() << " bytes";
  EXPECT_TRUE(rest.substr(rest.find("\r\n\r\n") + 4) == model->bytes);
}

TEST(ModelDownloadHttp, HeadOfTheModelTakesNoPlace) {
  const auto model = big_model();
  ServerThread server([] { return sample_status(); },
                      tracker::StatusHttpLimits{.download = {.max_downloads = 1}},
                      [model] { return model; });
  for (int i = 0; i < 3; ++i) {
    TestClient client(server.endpoint());
    const auto head = client.request(http::verb::head, "/model.safetensors");
    ASSERT_FALSE(head.error) << head.error.message();
    EXPECT_EQ(head.response.result(), http::status::ok);
    EXPECT_EQ(head.response[http::field::content_length], std::to_string(kModelBytes));
  }
  EXPECT_EQ(ask_for_the_model(server.endpoint(), "127.0.0.2").body().size(), kModelBytes);
}

}  // namespace
}  // namespace loco::test
