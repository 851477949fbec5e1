// transport: loopback throughput of plain TCP and of the encrypted channel (loco::net::Connection,
// sender and receiver on their own threads, as two peers would be), the bare AEAD encrypt speed
// on one core, and the accuracy of an emulated WAN link through the encrypted channel.
// Figures are the best of several runs (the least disturbed on a shared machine).
//
// Last line: transport: plain_gbit_s=… encrypted_gbit_s=… aead_gbit_s=… channel_vs_aead=…
//            shaped_rate_error_pct=… shaped_latency_error_ms=…

#include <sodium.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <cstdio>
#include <ctime>
#include <thread>
#include <vector>

#include "bench_timer.hpp"
#include "loco/core/sodium_init.hpp"
#include "loco/net/connection.hpp"
#include "loco/net/link_shaper.hpp"

namespace {

using namespace std::chrono_literals;
using boost::asio::ip::tcp;
using loco::net::Connection;
using loco::net::ConnectionHandlers;
using loco::secure::ChannelEvent;
using loco::secure::KeyPair;
using loco::secure::PublicKey;
using loco::secure::Role;
using loco::secure::SecureChannel;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kTransferBytes = std::size_t{1} << 30;
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

// CPU time of the whole process (all threads): unlike wall time, barely moved by other work on a
// shared machine.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double gbit_s(std::size_t bytes, double seconds) {
  return static_cast<double>(bytes) * 8 / seconds / 1e9;
}

struct SocketPair {
  tcp::socket client;
  tcp::socket server;
};

SocketPair connect_pair(boost::asio::io_context& client_io, boost::asio::io_context& server_io) {
  tcp::acceptor acceptor(server_io, {boost::asio::ip::address_v4::loopback(), 0});
  tcp::socket client(client_io);
  client.connect(acceptor.local_endpoint());
  return {std::move(client), acceptor.accept()};
}

double plain_tcp_seconds() {
  boost::asio::io_context io;
  auto [client, server] = connect_pair(io, io);
  std::vector<std::byte> send_block(kBlockBytes, std::byte{1});
  std::vector<std::byte> receive_block(kBlockBytes);
  const auto start = Clock::now();
  std::thread receiver([&] {
    std::size_t got = 0;
    while (got < kTransferBytes) got += server.read_some(boost::asio::buffer(receive_block));
  });
  for (std::size_t sent = 0; sent < kTransferBytes; sent += kBlockBytes)
    boost::asio::write(client, boost::asio::buffer(send_block));
  receiver.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::unique_ptr<SecureChannel> make_channel(Role role, const KeyPair& key, const PublicKey& peer) {
  loco::secure::ChannelConfig config;
  config.run_id = "bench";
  config.max_message_bytes = kTransferBytes;
  return std::make_unique<SecureChannel>(
      role, key, config, [peer](const PublicKey& k) { return k == peer; }, "bench",
      loco::from_steady(Clock::now()), loco::secure::fresh_ephemeral_seed());
}

// Sends kTransferBytes as 4 messages of 256 MiB from a client thread to a server thread.
double channel_seconds(std::span<const std::byte> quarter) {
  boost::asio::io_context client_io;
  boost::asio::io_context server_io;
  auto [client_socket, server_socket] = connect_pair(client_io, server_io);
  const KeyPair client_key = KeyPair::generate();
  const KeyPair server_key = KeyPair::generate();
  Clock::time_point start;
  Clock::time_point done;
  std::size_t received = 0;
  std::shared_ptr<Connection> server;
  server = Connection::create(std::move(server_socket),
                              make_channel(Role::responder, server_key, client_key.public_key()),
                              ConnectionHandlers{.on_established = {},
                                                 .on_chunk =
                                                     [&](const ChannelEvent& chunk) {
                                                       received += chunk.data.size();
                                                       if (received == kTransferBytes) {
                                                         done = Clock::now();
                                                         server->close();
                                                       }
                                                     },
                                                 .on_closed = {}});
  std::shared_ptr<Connection> client;
  client = Connection::create(std::move(client_socket),
                              make_channel(Role::initiator, client_key, server_key.public_key()),
                              ConnectionHandlers{.on_established =
                                                     [&] {
                                                       start = Clock::now();
                                                       for (int i = 0; i < 4; ++i)
                                                         client->send(1, quarter);
                                                     },
                                                 .on_chunk = {},
                                                 .on_closed = {}});
  server->start();
  client->start();
  double server_cpu = 0;
  std::thread server_thread([&] {
    server_io.run();
    server_cpu = thread_cpu_seconds();
  });
  client_io.run();
  const double client_cpu = thread_cpu_seconds();
  server_thread.join();
  server.reset();
  client.reset();
  const double wall = std::chrono::duration<double>(done - start).count();
  // Wall time near the sum of the two threads' CPU times means they did not overlap (the cores
  // were busy with other work); near the larger one means the pipeline ran in parallel.
  std::printf("channel: wall %.2f s, sender thread cpu %.2f s, receiver thread cpu %.2f s\n", wall,
              client_cpu, server_cpu);
  return wall;
}

// The cipher alone, as the channel uses it: one frame's worth of plaintext (the channel's frame
// size) encrypted from the caller's buffer into a separate frame buffer, 32 bytes of header
// authenticated with it.
double aead_seconds() {
  loco::ensure_sodium_initialized();
  const std::size_t frame = loco::secure::ChannelConfig{}.max_frame_bytes;
  std::vector<unsigned char> plain(frame, 3);
  std::vector<unsigned char> sealed(frame);
  std::array<unsigned char, 16> tag{};
  std::array<unsigned char, 32> header{};
  std::array<unsigned char, 32> key{};
  std::array<unsigned char, 24> nonce{};
  const auto start = Clock::now();
  for (std::size_t done = 0; done < kTransferBytes / 2; done += frame) {
    nonce[0] = static_cast<unsigned char>(done / frame);
    crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
        sealed.data(), tag.data(), nullptr, plain.data(), frame, header.data(), header.size(),
        nullptr, nonce.data(), key.data());
  }
  loco::bench::keep(tag);
  loco::bench::keep(sealed);
  return std::chrono::duration<double>(Clock::now() - start).count() * 2;  // per kTransferBytes
}

// One event loop, two connections, the client's sends paced by `settings`.
struct ShapedPair {
  boost::asio::io_context io;
  KeyPair client_key = KeyPair::generate();
  KeyPair server_key = KeyPair::generate();
  std::shared_ptr<Connection> client;
  std::shared_ptr<Connection> server;
  std::size_t server_received = 0;
  int server_messages = 0;
  int client_messages = 0;
  int established = 0;

  ShapedPair(std::unique_ptr<loco::net::LinkPacer> client_pacer,
             std::unique_ptr<loco::net::LinkPacer> server_pacer) {
    auto [client_socket, server_socket] = connect_pair(io, io);
    server = Connection::create(std::move(server_socket),
                                make_channel(Role::responder, server_key, client_key.public_key()),
                                ConnectionHandlers{.on_established = [this] { ++established; },
                                                   .on_chunk =
                                                       [this](const ChannelEvent& chunk) {
                                                         server_received += chunk.data.size();
                                                         if (chunk.last_chunk()) ++server_messages;
                                                       },
                                                   .on_closed = {}},
                                std::move(server_pacer));
    client = Connection::create(std::move(client_socket),
                                make_channel(Role::initiator, client_key, server_key.public_key()),
                                ConnectionHandlers{.on_established = [this] { ++established; },
                                                   .on_chunk =
                                                       [this](const ChannelEvent& chunk) {
                                                         if (chunk.last_chunk()) ++client_messages;
                                                       },
                                                   .on_closed = {}},
                                std::move(client_pacer));
    server->start();
    client->start();
    run_until([this] { return established == 2; });
  }

  template <typename Pred>
  void run_until(Pred done) {
    while (!done()) io.run_one();
  }
};

// Percent by which 64 MiB at 100 Mbit/s through the encrypted channel misses the ideal time.
double shaped_rate_error_pct() {
  loco::net::LinkSettings settings;
  settings.upload = 100'000'000;
  auto link = loco::net::LinkShaper::create(settings, loco::from_steady(Clock::now()));
  auto pacer = link->make_pacer(1);
  ShapedPair pair(std::move(pacer), nullptr);
  const std::vector<std::byte> tensor(std::size_t{64} << 20, std::byte{7});
  const auto start = Clock::now();
  pair.client->send(1, tensor);
  pair.run_until([&] { return pair.server_received == tensor.size(); });
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  const double ideal = static_cast<double>(loco::secure::sealed_frame_size(1 << 20) * 64) * 8 / 1e8;
  std::printf("shaped: 64 MiB at 100Mbit in %.4f s, ideal %.4f s\n", took, ideal);
  return 100 * (took / ideal - 1);
}

// Median one-way time of 9 ping-pongs over a link with 40 ms latency each way, minus 40 ms.
double shaped_latency_error_ms() {
  loco::net::LinkSettings settings;
  settings.latency = 40ms;
  const auto origin = loco::from_steady(Clock::now());
  auto client_link = loco::net::LinkShaper::create(settings, origin);
  auto server_link = loco::net::LinkShaper::create(settings, origin);
  auto client_pacer = client_link->make_pacer(1);
  auto server_pacer = server_link->make_pacer(2);
  ShapedPair pair(std::move(client_pacer), std::move(server_pacer));
  const std::array<std::byte, 8> ping{};
  std::vector<double> one_way_ms;
  for (int i = 1; i <= 9; ++i) {
    const auto start = Clock::now();
    pair.client->send(1, ping);
    pair.run_until([&] { return pair.server_messages == i; });
    pair.server->send(2, ping);
    pair.run_until([&] { return pair.client_messages == i; });
    one_way_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() /
                         2);
  }
  std::sort(one_way_ms.begin(), one_way_ms.end());
  const double median = one_way_ms[one_way_ms.size() / 2];
  std::printf("shaped: ping one way %.3f ms over a 40 ms link (median of 9)\n", median);
  return median - 40;
}

}  // namespace

int main() {
  std::vector<std::byte> quarter(kTransferBytes / 4);
  for (std::size_t i = 0; i < quarter.size(); ++i) quarter[i] = static_cast<std::byte>(i * 13);

  double plain = 1e300, encrypted = 1e300, aead = 1e300;
  double plain_cpu = 1e300, channel_cpu = 1e300, aead_cpu = 1e300;
  for (int run = 0; run < 3; ++run) {
    double cpu = cpu_seconds();
    plain = std::min(plain, plain_tcp_seconds());
    plain_cpu = std::min(plain_cpu, cpu_seconds() - cpu);
    cpu = cpu_seconds();
    encrypted = std::min(encrypted, channel_seconds(quarter));
    channel_cpu = std::min(channel_cpu, cpu_seconds() - cpu);
    cpu = cpu_seconds();
    aead = std::min(aead, aead_seconds());
    aead_cpu = std::min(aead_cpu, 2 * (cpu_seconds() - cpu));
    std::printf("run %d: plain %.2f Gbit/s, encrypted %.2f Gbit/s, aead %.2f Gbit/s\n", run,
                gbit_s(kTransferBytes, plain), gbit_s(kTransferBytes, encrypted),
                gbit_s(kTransferBytes, aead));
  }
  // The channel's CPU time (both ends) against the cipher's (encrypt at one end, decrypt at the
  // other) and the kernel's socket copies (plain TCP); the rest is the channel's own overhead.
  std::printf(
      "cpu per GiB, both ends: channel %.2f s = aead %.2f s + plain tcp %.2f s + other "
      "%.2f s; cipher share of channel cpu %.3f\n",
      channel_cpu, 2 * aead_cpu, plain_cpu, channel_cpu - 2 * aead_cpu - plain_cpu,
      2 * aead_cpu / channel_cpu);
  const double rate_error = shaped_rate_error_pct();
  const double latency_error = shaped_latency_error_ms();
  std::printf(
      "transport: plain_gbit_s=%.2f encrypted_gbit_s=%.2f aead_gbit_s=%.2f channel_vs_aead=%.3f "
      "shaped_rate_error_pct=%.2f shaped_latency_error_ms=%.2f\n",
      gbit_s(kTransferBytes, plain), gbit_s(kTransferBytes, encrypted),
      gbit_s(kTransferBytes, aead), aead / encrypted, rate_error, latency_error);
  return 0;
}
