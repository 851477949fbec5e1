// bench/run.sh allreduce: the all-reduce (proto/all_reduce.hpp; --algorithm direct, the default,
// or ring) of a 10M-parameter Δ between 4 peers over real encrypted loopback connections
// (net/peer_mesh.hpp), each peer's link shaped by loco's own emulation (docs/LINK_EMULATION.md)
// to 100 Mbit/s upload and 50 ms one-way latency, Δ encoded int8 blockwise. All four peers run on
// one io_context.
//
// The bound, for N peers, S encoded bytes of Δ, upload B and latency L: the bytes at full upload
// plus one latency per sequential step, 2(N−1) for the ring and 2 for the direct exchange:
//   bound_s = 2(N−1)/N · S/B + 2(N−1)·L   (ring)      2(N−1)/N · S/B + 2·L   (direct)
// With --check-owners (proto/owner_check.hpp) every chunk also goes to its segment's checker, and
// the checker's signed digest follows the owner's list of inputs:
//   bound_s = 3(N−1)/N · S/B + 3·L   (direct, checked)
// The connections are opened (handshakes, one message between every two peers) before the clock
// starts; the best of --repeats all-reduces is reported. Last line:
//   allreduce: seconds=… bound_s=… time_vs_bound=… algorithm=… check_owners=…

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>

#include "loco/compress/codec.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/rng.hpp"
#include "loco/core/time.hpp"
#include "loco/net/link_shaper.hpp"
#include "loco/net/peer_mesh.hpp"
#include "loco/net/units.hpp"
#include "loco/proto/all_reduce.hpp"

namespace {

using namespace loco;
using Clock = std::chrono::steady_clock;
using boost::asio::ip::tcp;

struct Options {
  std::size_t peers = 4;
  std::size_t values = 10'000'000;
  std::string codec = "int8:block=256";
  std::string upload = "100Mbit";
  std::string latency = "50ms";
  std::size_t chunk_values = std::size_t{1} << 16;
  std::string algorithm = "direct";
  bool check_owners = false;
  int repeats = 3;
};

struct Member {
  secure::KeyPair key = secure::KeyPair::generate();
  std::shared_ptr<net::PeerMesh> mesh;
  std::string address;
  std::vector<std::pair<secure::PublicKey, std::vector<std::byte>>> inbox;
  std::vector<float> values;
};

class Group {
 public:
  Group(const Options& o, const net::LinkSettings& link) : o_(o) {
    for (std::size_t i = 0; i < o.peers; ++i) members_.push_back(std::make_unique<Member>());
    for (auto& m : members_) keys_.push_back(m->key.public_key());
    for (std::size_t i = 0; i < o.peers; ++i) {
      Member* self = members_[i].get();
      self->mesh = net::PeerMesh::create(
          io_, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0),
          net::PeerMeshConfig{
              .setup = net::ChannelSetup{.identity = &self->key,
                                         .config = secure::ChannelConfig{.run_id = "bench"},
                                         .accept =
                                             [this](const secure::PublicKey& k) {
                                               return std::find(keys_.begin(), keys_.end(), k) !=
                                                      keys_.end();
                                             },
                                         .peer_label = {}},
              .bundle = net::BundleConfig{.streams = 1, .unit_bytes = 256 << 10},
              .link = net::LinkShaper::create(link, from_steady(Clock::now())),
              .limits = net::ListenerLimits::peer_defaults(),
              .prober = {}},
          net::PeerMeshHandlers{.on_message =
                                    [self](const secure::PublicKey& from, proto::MessageType,
                                           std::span<const std::byte> body) {
                                      self->inbox.emplace_back(
                                          from, std::vector<std::byte>(body.begin(), body.end()));
                                    },
                                .on_lost =
                                    [](const secure::PublicKey&, const std::string& why) {
                                      throw std::runtime_error("connection lost: " + why);
                                    }});
      self->mesh->start();
      self->address = fmt::format("127.0.0.1:{}", self->mesh->local_endpoint().port());
    }
  }

  // Opens every connection: one small message from each peer to every other.
  void connect() {
    for (std::size_t i = 0; i < o_.peers; ++i)
      for (std::size_t j = 0; j < o_.peers; ++j)
        if (j != i) send(i, keys_[j], std::vector<std::byte>(8));
    run_until([&] {
      return std::all_of(members_.begin(), members_.end(),
                         [&](const auto& m) { return m->inbox.size() == o_.peers - 1; });
    });
    for (auto& m : members_) m->inbox.clear();
  }

  // One all-reduce of every member's values; returns its wall time.
  double all_reduce(proto::AllReduceAlgorithm algorithm, std::uint64_t round,
                    const compress::Codec& codec) {
    std::vector<std::unique_ptr<proto::AllReduce>> nodes;
    for (std::size_t i = 0; i < o_.peers; ++i)
      nodes.push_back(proto::make_all_reduce(algorithm,
                                             proto::AllReduceConfig{.round = round,
                                                                    .attempt = 1,
                                                                    .members = keys_,
                                                                    .self = i,
                                                                    .chunk_values = o_.chunk_values,
                                                                    .codec = &codec,
                                                                    .seed = round,
                                                                    .median_norm = 0,
                                                                    .norm_limit = 0,
                                                                    .trim = 0,
                                                                    .weights = {},
                                                                    .buffers = nullptr,
                                                                    .check_owners = o_.check_owners,
                                                                    .signer = &members_[i]->key,
                                                                    .run_id = "bench"},
                                             members_[i]->values, members_[i]->values));
    const auto start = Clock::now();
    const auto pump = [&](std::size_t i) {
      while (auto t = nodes[i]->poll_transmit()) send(i, t->to, std::move(t->body));
    };
    for (std::size_t i = 0; i < o_.peers; ++i) {
      nodes[i]->start();
      pump(i);
    }
    run_until([&] {
      for (std::size_t i = 0; i < o_.peers; ++i) {
        for (auto& [from, body] : members_[i]->inbox) nodes[i]->on_message(from, body);
        members_[i]->inbox.clear();
        pump(i);
        if (nodes[i]->failure()) throw std::runtime_error(nodes[i]->failure()->reason);
      }
      return std::all_of(nodes.begin(), nodes.end(), [](const auto& n) { return n->done(); });
    });
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  std::vector<std::unique_ptr<Member>>& members() { return members_; }

 private:
  void send(std::size_t i, const secure::PublicKey& to, std::vector<std::byte> body) {
    const auto j =
        static_cast<std::size_t>(std::find(keys_.begin(), keys_.end(), to) - keys_.begin());
    members_[i]->mesh->send(to, members_[j]->address, proto::MessageType::ring_chunk,
                            std::move(body));
  }
  template <typename Pred>
  void run_until(Pred done) {
    const auto give_up = Clock::now() + std::chrono::minutes(5);
    while (!done()) {
      if (Clock::now() > give_up) throw std::runtime_error("the all-reduce did not finish");
      io_.run_one_for(std::chrono::milliseconds(5));
    }
  }

  const Options& o_;
  boost::asio::io_context io_;
  std::vector<std::unique_ptr<Member>> members_;
  std::vector<secure::PublicKey> keys_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app("an all-reduce over shaped loopback links against its bound");
  app.add_option("--peers", o.peers)->capture_default_str();
  app.add_option("--values", o.values, "Δ's parameters")->capture_default_str();
  app.add_option("--codec", o.codec)->capture_default_str();
  app.add_option("--upload", o.upload, "each peer's upload")->capture_default_str();
  app.add_option("--latency", o.latency, "one way")->capture_default_str();
  app.add_option("--chunk-values", o.chunk_values)->capture_default_str();
  app.add_option("--algorithm", o.algorithm, "direct or ring")->capture_default_str();
  app.add_option("--repeats", o.repeats)->capture_default_str();
  app.add_option("--check-owners", o.check_owners, "direct: each segment reduced twice, signed")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    net::LinkSettings link;
    link.upload = net::parse_bandwidth(o.upload, "--upload");
    link.latency = net::parse_duration(o.latency, "--latency", net::kMaxLatency);
    const auto codec = compress::make_codec(o.codec);
    const proto::AllReduceAlgorithm algorithm = proto::parse_all_reduce_algorithm(o.algorithm);

    Group group(o, link);
    Rng rng(7);
    for (auto& m : group.members()) {
      m->values.resize(o.values);
      for (float& x : m->values) x = 0.01f * rng.normal();
    }
    const std::vector<std::vector<float>> inputs = [&] {
      std::vector<std::vector<float>> v;
      for (auto& m : group.members()) v.push_back(m->values);
      return v;
    }();
    group.connect();

    // S: the encoded size of Δ, chunk by chunk as the collective sends it (≈ what one peer's
    // 2(N−1)/N share of the traffic is made of).
    std::size_t encoded = 0;
    for (std::size_t at = 0; at < o.values; at += o.chunk_values)
      encoded += codec->max_encoded_size(std::min(o.chunk_values, o.values - at));
    const double n = static_cast<double>(o.peers);
    const double upload_bytes_s = static_cast<double>(link.upload) / 8.0;
    const double latency_s = std::chrono::duration<double>(link.latency).count();
    const bool ring = algorithm == proto::AllReduceAlgorithm::ring;
    const bool checked = o.check_owners && !ring;
    const double steps = ring ? 2.0 * (n - 1) : checked ? 3.0 : 2.0;
    const double shares = checked ? 3.0 : 2.0;
    const double bound =
        shares * (n - 1) / n * static_cast<double>(encoded) / upload_bytes_s + steps * latency_s;

    double best = 1e300;
    for (int r = 1; r <= o.repeats; ++r) {
      for (std::size_t i = 0; i < o.peers; ++i) group.members()[i]->values = inputs[i];
      const std::uint64_t sent_before = group.members()[0]->mesh->bytes_sent();
      const double s = group.all_reduce(algorithm, static_cast<std::uint64_t>(r), *codec);
      const Digest first = blake2b(std::span<const float>(group.members()[0]->values));
      for (auto& m : group.members())
        if (blake2b(std::span<const float>(m->values)) != first)
          throw std::runtime_error("peers ended with different means");
      fmt::print("repeat {}: {:.3f} s, peer 0 sent {} bytes on the wire\n", r, s,
                 group.members()[0]->mesh->bytes_sent() - sent_before);
      best = std::min(best, s);
    }
    fmt::print(
        "{} peers, {} values, codec {}, S = {} encoded bytes, upload {}, latency {} one way\n",
        o.peers, o.values, codec->spec(), encoded, o.upload, o.latency);
    fmt::print(
        "allreduce: seconds={:.3f} bound_s={:.3f} time_vs_bound={:.3f} algorithm={} "
        "check_owners={}\n",
        best, bound, best / bound, proto::name(algorithm), checked ? 1 : 0);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench-allreduce: {}\n", e.what());
    return 1;
  }
}
