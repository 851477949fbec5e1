// Issue 44: one client kept the finished model from everyone. A real loco-tracker holds a finished
// run's final model; a client hammers GET /model.safetensors from six loopback addresses, each
// asking every 0.5 s on a new connection with the smallest receive buffer and never reading
// (before: the model went out once per 30 s to whoever asked first, so it got every copy). An
// honest client asking every 3 s from another address must get the whole model within 8 tries,
// byte for byte the file `loco-tracker export` writes, with the state hash the peer committed.

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/write.hpp>
#include <deque>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../support/http_client.hpp"
#include "../support/local_swarm.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/hash.hpp"

namespace loco {
namespace {

using namespace std::chrono_literals;
using test::asio::ip::tcp;
namespace asio = test::asio;
namespace http = test::http;

constexpr std::uint64_t kDownloadRunRounds = 2;
constexpr int kHammeringAddresses = 6;
constexpr std::size_t kConnectionsKept = 8;  // each address's newest, never read
constexpr int kHonestTries = 8;

// Asks for the model every 0.5 s from each of its addresses until `stop`, never reading.
class Hammer {
 public:
  explicit Hammer(tcp::endpoint server) : server_(std::move(server)), thread_([this] { run(); }) {}
  ~Hammer() {
    stop_ = true;
    thread_.join();
  }
  Hammer(const Hammer&) = delete;
  Hammer& operator=(const Hammer&) = delete;

  int asks() const { return asks_; }

 private:
  void run() {
    asio::io_context io;
    std::vector<std::deque<tcp::socket>> held(kHammeringAddresses);
    while (!stop_) {
      for (int a = 0; a < kHammeringAddresses; ++a) {
        tcp::socket socket(io);
        boost::system::error_code error;
        socket.open(tcp::v4(), error);
        socket.set_option(asio::socket_base::receive_buffer_size(1), error);
        socket.bind({asio::ip::make_address("127.0.0." + std::to_string(10 + a)), 0}, error);
        socket.connect(server_, error);
        asio::write(socket,
                    asio::buffer(std::string_view(
                        "GET /model.safetensors HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")),
                    error);
        ++asks_;
        held[a].push_back(std::move(socket));
        if (held[a].size() > kConnectionsKept) held[a].pop_front();
      }
      std::this_thread::sleep_for(500ms);  // the attacker's pace
    }
  }

  tcp::endpoint server_;
  std::atomic<bool> stop_ = false;
  std::atomic<int> asks_ = 0;
  std::thread thread_;
};

TEST(ModelDownload, AClientHammeringFromManyAddressesCannotKeepTheModelFromAnHonestOne) {
  test::LocalSwarm swarm("model-download", kDownloadRunRounds,
                         {"--tracker.custody-every", "2", "--tracker.model-downloads", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  test::PeerProcess& peer = swarm.add_peer("peer0");
  const std::string over = peer.wait_for("run over: ");
  const std::string expected =
      "run over: final round " + std::to_string(kDownloadRunRounds) + ", state ";
  ASSERT_TRUE(over.starts_with(expected) && over.ends_with(", kept by the tracker"))
      << over << "\n"
      << swarm.logs();
  const std::string state = over.substr(expected.size(), 16);
  EXPECT_EQ(peer.process().wait(), 0) << swarm.logs();

  const auto server = test::endpoint_of(swarm.tracker().http_address());
  // The attacker has had a copy (before: nobody else got one for 30 s), then hammers.
  test::TestClient attacker(server, "127.0.0.10");
  ASSERT_EQ(attacker.get("/model.safetensors").response.result_int(), 200) << swarm.logs();
  Hammer hammer(server);
  // The honest client comes once the hammering is under way (four rounds of asks).
  const auto hammering = std::chrono::steady_clock::now() + 60s;
  while (hammer.asks() < 4 * kHammeringAddresses && std::chrono::steady_clock::now() < hammering)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(hammer.asks(), 4 * kHammeringAddresses);
  // The honest client asks every 3 s. A client in line is served once those ahead of it are
  // (each asks every 0.5 s and takes its copy at once) or have dropped out (a waiter that stops
  // asking loses its place after 15 s): 8 tries span 21 s. Before, it got 503 for 30 s.
  test::TestClient::Reply reply;
  int tries = 0;
  while (tries < kHonestTries) {
    if (tries++ > 0) std::this_thread::sleep_for(3s);  // its pace
    test::TestClient client(server, "127.0.0.2");
    reply = client.get("/model.safetensors");
    ASSERT_FALSE(reply.error) << reply.error.message() << "\n" << swarm.logs();
    if (reply.response.result() == http::status::ok) break;
    EXPECT_EQ(reply.response.result(), http::status::service_unavailable) << reply.response.body();
    EXPECT_NE(reply.response.body().find("in line"), std::string::npos) << reply.response.body();
  }
  ASSERT_EQ(reply.response.result(), http::status::ok)
      << tries << " tries: " << reply.response.body() << "\n"
      << swarm.logs();
  EXPECT_GT(hammer.asks(), 0);
  RecordProperty("honest_tries", tries);
  RecordProperty("hammer_asks", hammer.asks());

  // Byte for byte the file `loco-tracker export` writes, carrying the committed state's hash.
  const auto out = swarm.dir() / "model.safetensors";
  test::ChildProcess exporter(
      {test::program("loco-tracker"), "export", "--out", out.string(), "--run.id", "model-download",
       "--run.config", (swarm.dir() / "swarm.toml").string(), "--tracker.state-file",
       (swarm.dir() / "tracker.state").string()},
      swarm.dir() / "export.log");
  exporter.read_line(test::kLinePatienceMs);
  ASSERT_EQ(exporter.wait(), 0) << test::read_text(swarm.dir() / "export.log");
  EXPECT_TRUE(reply.response.body() == test::read_text(out))
      << reply.response.body().size() << " bytes served";
  const std::string& body = reply.response.body();
  // Its ETag is the file's BLAKE2b-256: a copy from elsewhere can be checked against it.
  EXPECT_EQ(reply.response[http::field::etag],
            "\"" + to_hex(blake2b(std::as_bytes(std::span(body.data(), body.size())))) + "\"");
  const auto served = checkpoint::SafetensorsFile::parse(
      std::as_bytes(std::span(body.data(), body.size())), "the served model");
  EXPECT_EQ(served.metadata().at("loco.round"), std::to_string(kDownloadRunRounds));
  EXPECT_TRUE(served.metadata().at("loco.state_hash").starts_with(state))
      << served.metadata().at("loco.state_hash") << " vs " << state;
}

// The download settings are checked before the tracker serves anything, each with its name.
TEST(ModelDownload, OutOfRangeSettingsAreRefusedByName) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--tracker.model-download-floor", "0"},
       "--tracker.model-download-floor = \"0\": must be a rate"},
      {{"--tracker.model-download-floor", "unlimited"}, "--tracker.model-download-floor"},
      {{"--tracker.model-download-floor", "fast"}, "--tracker.model-download-floor"},
      {{"--tracker.model-downloads", "0"}, "--tracker.model-downloads"},
  };
  for (const auto& [options, message] : cases) {
    test::TempDir dir;
    test::TrackerProcess tracker(dir.path(), "run-options", options);
    EXPECT_FALSE(tracker.started()) << options[1];
    EXPECT_NE(tracker.process().wait(), 0);
    EXPECT_NE(tracker.log().find(message), std::string::npos) << tracker.log();
  }
}

}  // namespace
}  // namespace loco
