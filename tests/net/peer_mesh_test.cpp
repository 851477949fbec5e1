// Peer meshes over real loopback sockets: members reach each other by address, refuse strangers,
// and run the ring all-reduce end to end over encrypted bundles, ending with identical bits.

#include "loco/net/peer_mesh.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "connection_harness.hpp"
#include "idle_socket.hpp"
#include "loco/compress/codec.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/rng.hpp"
#include "loco/net/host_port.hpp"
#include "loco/proto/ring_allreduce.hpp"

namespace loco::net {
namespace {

using boost::asio::ip::tcp;

struct Member {
  secure::KeyPair key = secure::KeyPair::generate();
  std::shared_ptr<PeerMesh> mesh;
  std::string address;
  std::vector<std::tuple<secure::PublicKey, proto::MessageType, std::vector<std::byte>>> inbox;
  std::vector<std::string> lost;
};

struct Swarm {
  boost::asio::io_context io;
  std::vector<std::unique_ptr<Member>> members;
  std::set<secure::PublicKey> allowed;
  ListenerLimits member_limits;

  explicit Swarm(std::size_t n, const ListenerLimits& limits = ListenerLimits::peer_defaults())
      : member_limits(limits) {
    for (std::size_t i = 0; i < n; ++i) members.push_back(std::make_unique<Member>());
    for (auto& m : members) allowed.insert(m->key.public_key());
    for (auto& m : members) start(*m);
  }
  // A member's key in another process: a mesh of its own on another port.
  Member& restart(const Member& old) {
    members.push_back(std::make_unique<Member>());
    members.back()->key = old.key;
    start(*members.back());
    return *members.back();
  }
  void start(Member& m) {
    Member* self = &m;
    self->mesh = PeerMesh::create(
        io, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0),
        PeerMeshConfig{.setup = ChannelSetup{.identity = &self->key,
                                             .config = secure::ChannelConfig{.run_id = "mesh"},
                                             .accept =
                                                 [this](const secure::PublicKey& k) {
                                                   return allowed.contains(k);
                                                 },
                                             .peer_label = {}},
                       .bundle = BundleConfig{.streams = 2, .unit_bytes = 64 << 10},
                       .link = nullptr,
                       .limits = member_limits,
                       .prober = {}},
        PeerMeshHandlers{.on_message =
                             [self](const secure::PublicKey& from, proto::MessageType type,
                                    std::span<const std::byte> body) {
                               self->inbox.emplace_back(
                                   from, type, std::vector<std::byte>(body.begin(), body.end()));
                             },
                         .on_lost = [self](const secure::PublicKey&,
                                           const std::string& why) { self->lost.push_back(why); }});
    self->mesh->start();
    self->address = fmt::format("127.0.0.1:{}", self->mesh->local_endpoint().port());
  }
  template <typename Pred>
  bool run_until(Pred done) {
    return testing::run_io_until(io, done);
  }
};

TEST(PeerMesh, MembersExchangeMessagesInOrder) {
  Swarm s(2);
  Member& a = *s.members[0];
  Member& b = *s.members[1];
  for (int i = 0; i < 20; ++i)
    a.mesh->send(b.key.public_key(), b.address, proto::MessageType::ring_chunk,
                 std::vector<std::byte>(1000 + i, static_cast<std::byte>(i)));
  ASSERT_TRUE(s.run_until([&] { return b.inbox.size() == 20; }));
  for (int i = 0; i < 20; ++i) {
    const auto& [from, type, body] = b.inbox[static_cast<std::size_t>(i)];
    EXPECT_EQ(from, a.key.public_key());
    EXPECT_EQ(body.size(), 1000u + static_cast<std::size_t>(i)) << "in order";
  }
}

// A member nobody can dial opens the link; the reachable one sends on it (SendOn::their), holding
// what it sent before the link was there, and both directions arrive in order on one bundle.
TEST(PeerMesh, AMessageForTheLinkTheOtherOpensWaitsForItAndGoesOnIt) {
  Swarm s(2);
  Member& open = *s.members[0];
  Member& behind = *s.members[1];
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(open.mesh->send(behind.key.public_key(), "", proto::MessageType::ring_chunk,
                                std::vector<std::byte>(100 + i), proto::SendOn::their));
  // Nothing can go out yet: no address is dialled for a message on the other's link.
  for (int i = 0; i < 100; ++i) s.io.poll();
  EXPECT_TRUE(behind.inbox.empty());
  ASSERT_TRUE(behind.mesh->send(open.key.public_key(), open.address, proto::MessageType::link_open,
                                std::vector<std::byte>{std::byte{1}}));
  ASSERT_TRUE(s.run_until([&] { return behind.inbox.size() == 3 && open.inbox.size() == 1; }));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(std::get<2>(behind.inbox[static_cast<std::size_t>(i)]).size(),
              100u + static_cast<std::size_t>(i))
        << "in order, on the bundle `behind` opened";
  ASSERT_TRUE(open.mesh->send(behind.key.public_key(), "", proto::MessageType::ring_chunk,
                              std::vector<std::byte>(7), proto::SendOn::their));
  ASSERT_TRUE(s.run_until([&] { return behind.inbox.size() == 4; }));
  EXPECT_TRUE(open.lost.empty());
  EXPECT_TRUE(behind.lost.empty());
}

// A member restarted in a new process with the same key, its old process still holding its
// links open (here it runs on; frozen, it would read nothing). The donor answers the process that
// asked, on the link it opened, and its own link follows the address the view lists now; the old
// process gets nothing more. Then the two processes take turns asking: each is answered in turn,
// and once they stop, nothing moves: replacing a link starts no exchange of its own.
TEST(PeerMesh, TheNewestProcessOfAKeyIsAnsweredAndTheOwnLinkFollowsItsAddress) {
  Swarm s(2);
  Member& donor = *s.members[0];
  Member& old = *s.members[1];
  const secure::PublicKey k = old.key.public_key();
  const auto ask = [&](Member& asker) {
    ASSERT_TRUE(asker.mesh->send(donor.key.public_key(), donor.address,
                                 proto::MessageType::state_request, std::vector<std::byte>(8)));
  };
  const auto answer = [&] {
    ASSERT_TRUE(donor.mesh->send(k, "unused", proto::MessageType::state_manifest,
                                 std::vector<std::byte>(16), proto::SendOn::asker));
  };
  ask(old);
  ASSERT_TRUE(s.run_until([&] { return donor.inbox.size() == 1; }));
  answer();
  ASSERT_TRUE(
      donor.mesh->send(k, old.address, proto::MessageType::ring_chunk, std::vector<std::byte>(32)));
  ASSERT_TRUE(s.run_until([&] { return old.inbox.size() == 2; }));

  Member& fresh = s.restart(old);
  ask(fresh);
  ASSERT_TRUE(s.run_until([&] { return donor.inbox.size() == 2; }));
  answer();
  ASSERT_TRUE(s.run_until([&] { return fresh.inbox.size() == 1; }));
  EXPECT_EQ(std::get<1>(fresh.inbox[0]), proto::MessageType::state_manifest);
  ASSERT_TRUE(donor.mesh->send(k, fresh.address, proto::MessageType::ring_chunk,
                               std::vector<std::byte>(32)));
  ASSERT_TRUE(s.run_until([&] { return fresh.inbox.size() == 2; }));
  EXPECT_EQ(std::get<1>(fresh.inbox[1]), proto::MessageType::ring_chunk);
  EXPECT_EQ(old.inbox.size(), 2u) << "nothing more for the old process";

  // The two take turns: the newest link of the key wins each time.
  for (Member* asker : {&old, &fresh, &old}) {
    const std::size_t before = asker->inbox.size();
    ask(*asker);
    ASSERT_TRUE(s.run_until([&] { return donor.inbox.size() == 3; }));
    donor.inbox.pop_back();
    answer();
    ASSERT_TRUE(s.run_until([&] { return asker->inbox.size() == before + 1; }));
  }
  const auto counts = [&] {
    return std::vector<std::size_t>{donor.inbox.size(), old.inbox.size(), fresh.inbox.size(),
                                    donor.lost.size(),  old.lost.size(),  fresh.lost.size()};
  };
  s.io.run_for(std::chrono::milliseconds(200));
  const auto settled = counts();
  s.io.run_for(std::chrono::milliseconds(300));
  EXPECT_EQ(counts(), settled) << "nothing moves by itself";
  // Each lost its link to the donor once per turn of the other (and the old process its link
  // from the donor once, when the donor dialled the new address); the donor lost nothing.
  EXPECT_EQ(settled, (std::vector<std::size_t>{2, 4, 3, 0, 3, 2}));
}

TEST(PeerMesh, AStrangerIsRefusedAndItsMessagesNeverArrive) {
  Swarm s(2);
  Member& b = *s.members[1];
  s.allowed.erase(s.members[0]->key.public_key());  // member 0 left the view
  s.members[0]->mesh->send(b.key.public_key(), b.address, proto::MessageType::ring_chunk,
                           std::vector<std::byte>(10));
  ASSERT_TRUE(s.run_until([&] { return !s.members[0]->lost.empty(); }));
  EXPECT_TRUE(b.inbox.empty());
}

TEST(PeerMesh, TheRingAllReduceRunsOverRealConnections) {
  constexpr std::size_t kMembers = 4, kValues = 300'001;
  Swarm s(kMembers);
  const auto codec = compress::make_codec("int8:block=256");
  std::vector<proto::PeerKey> ring;
  for (auto& m : s.members) ring.push_back(m->key.public_key());
  std::vector<std::vector<float>> values(kMembers, std::vector<float>(kValues));
  Rng rng(4);
  for (auto& v : values)
    for (float& x : v) x = rng.normal();
  std::vector<std::unique_ptr<proto::RingAllReduce>> nodes;
  for (std::size_t i = 0; i < kMembers; ++i) {
    nodes.push_back(
        std::make_unique<proto::RingAllReduce>(proto::AllReduceConfig{.round = 1,
                                                                      .attempt = 1,
                                                                      .members = ring,
                                                                      .self = i,
                                                                      .chunk_values = 1 << 14,
                                                                      .codec = codec.get(),
                                                                      .seed = 1,
                                                                      .median_norm = 0,
                                                                      .norm_limit = 0},
                                               values[i], values[i]));
  }
  const auto pump = [&](std::size_t i) {
    while (auto t = nodes[i]->poll_transmit()) {
      const std::size_t to = (i + 1) % kMembers;
      s.members[i]->mesh->send(t->to, s.members[to]->address, proto::MessageType::ring_chunk,
                               std::move(t->body));
    }
  };
  for (std::size_t i = 0; i < kMembers; ++i) {
    nodes[i]->start();
    pump(i);
  }
  std::vector<std::size_t> consumed(kMembers, 0);
  ASSERT_TRUE(s.run_until([&] {
    for (std::size_t i = 0; i < kMembers; ++i) {
      auto& inbox = s.members[i]->inbox;
      for (; consumed[i] < inbox.size(); ++consumed[i]) {
        const auto& [from, type, body] = inbox[consumed[i]];
        nodes[i]->on_message(from, body);
      }
      pump(i);
    }
    return std::all_of(nodes.begin(), nodes.end(), [](const auto& n) { return n->done(); });
  }));
  const Digest first = blake2b(std::span<const float>(values[0]));
  for (std::size_t i = 1; i < kMembers; ++i)
    EXPECT_EQ(blake2b(std::span<const float>(values[i])), first) << "member " << i;
}

TEST(PeerMesh, AFloodFromOneAddressTakesOnlyItsShareAndMembersStillTalk) {
  // The peer's default caps; deadlines far beyond the test, so only the caps act.
  ListenerLimits limits = ListenerLimits::peer_defaults();
  limits.handshake_timeout = limits.bundle_timeout = std::chrono::seconds(600);
  Swarm s(2, limits);
  Member& a = *s.members[0];
  Member& b = *s.members[1];
  std::vector<std::unique_ptr<testing::IdleSocket>> flood;
  for (int i = 0; i < 100; ++i)
    flood.push_back(
        std::make_unique<testing::IdleSocket>(s.io, "127.0.0.2", b.mesh->local_endpoint()));
  const std::size_t share = limits.max_pending_per_source;  // 16
  ASSERT_TRUE(s.run_until([&] { return testing::count_dropped(flood) == flood.size() - share; }));
  a.mesh->send(b.key.public_key(), b.address, proto::MessageType::ring_chunk,
               std::vector<std::byte>(100, std::byte{7}));
  ASSERT_TRUE(s.run_until([&] { return b.inbox.size() == 1; }));
  EXPECT_EQ(testing::count_dropped(flood), flood.size() - share);  // the share is still held
}

}  // namespace
}  // namespace loco::net
