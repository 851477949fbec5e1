// loco-member-attacker: a member of a run that lies, for the real-process tests of the tracker's
// rules against such members (docs/TRACKER.md, "Members that lie";
// tests/programs/member_attack_test.cpp). It has its own key and speaks the real protocol over the
// real network stack: proto::TrackerClient over a net::StreamBundle to the tracker, net::PeerMesh
// to the other members, proto::make_all_reduce with the run's codec for a round's collective.
// The tracker connection is driven here (tracker_connection.hpp), not by net::TrackerLink, which
// reconnects on its own: an attacker must see the tracker cut it off, and send frames that no
// client encodes.
//
//   loco-member-attacker --key FILE --tracker HOST:PORT --tracker-key HEX --run-id ID
//                        --run-config FILE [--token T] [--listen HOST:PORT] --attack NAME
//                        [--first leave|report|heartbeat] [--count N] [--churn-after K]
//
// Attacks:
//   accuse         says ready every round and takes part in nothing: in every group it is in it
//                  reports at once a failure naming another member (each in turn); alone in a
//                  group, it reports round done with a state of its own (32 bytes of 0x42)
//   poison         says ready with an update norm of 0 and contributes 1e30 in every value (int8
//                  blocks of scale ~1e30) to the all-reduce; otherwise follows the protocol
//   wrong-mean     contributes an update of zeros and, as the owner of its segment in the direct
//                  exchange, sends everyone that segment's mean negated, its result statement
//                  signed over what it sent (sim/lying_member.hpp); otherwise follows the protocol
//   disputer       contributes an update of zeros and, as the checker of a segment in the direct
//                  exchange, signs a result statement no honest checker computes (the owner it
//                  checks is disputed every attempt; sim/lying_member.hpp); otherwise follows the
//                  protocol. Beside a wrong-mean member, it is one of two colluding disputers
//   genesis-squat  joins with a genesis of 32 zero bytes
//   flood          once joined, sends malformed messages (a leave and a misbehaviour report whose
//                  reasons hold a newline, a forged log line and ANSI escapes, a heartbeat with a
//                  bad body) in turn, from --first (leave, report or heartbeat), as fast as its
//                  connection takes them, until cut off; then joins again
//   flood-reports  once joined, sends --count well-formed misbehaviour reports, each naming a
//                  key of no member with a reason of 1,000 bytes, then a malformed heartbeat: the
//                  tracker cuts it off once it has read every report
//   idle           joins, then never says ready and never fetches the state it is told to fetch
//   churn          joins, leaves when it is told to fetch the state for the --churn-after-th time
//                  (1: at once, the resync of its join; 2: after the next commit) and joins again,
//                  --count times
//   idle-admitted  completes the handshake and the bundle hello, never sends a join request
//   future-report  joins and reports that it holds the state of round 2^63
//   false-donor    a holder that lies about the bytes: told to fetch the run's state, it asks the
//                  first donor named for the manifest only, then claims the state and serves
//                  that true manifest with chunks of zeros (which do not match it) to whoever the
//                  tracker sends to fetch from it; it never says ready
// The lying members (accuse, poison, wrong-mean, disputer) claim to hold every state the tracker
// commits or tells them to fetch, without computing or fetching it. Those that exchange send a
// dispute's judge their contribution (and list) as an honest member does, and never judge.
//
// One line on stdout per event a test waits for:
//   joined shard I of N as ID | refused REASON | group ROUND ATTEMPT SIZE
//   | accused ROUND ATTEMPT ID | committed ROUND HASH12 | aborted ROUND ATTEMPT: REASON
//   | told to fetch ROUND HASH12 | admitted | reported round R | cut off after N messages
//   | churned N | holds a false copy of ROUND HASH12 | served a false chunk to ID
// It exits 0 when refused, when cut off (flood: once refused after joining again) and on SIGTERM.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdio>

#include "loco/cli/train_options.hpp"
#include "loco/compress/codec.hpp"
#include "loco/core/log.hpp"
#include "loco/net/host_port.hpp"
#include "loco/net/peer_mesh.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/proto/direct_allreduce.hpp"
#include "loco/proto/early_messages.hpp"
#include "loco/proto/encoded_update.hpp"
#include "loco/proto/judge_messages.hpp"
#include "loco/proto/state_transfer.hpp"
#include "loco/sim/lying_member.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/run_settings.hpp"
#include "member_attacker/tracker_connection.hpp"

namespace {

using namespace loco;
using Bytes = std::vector<std::byte>;
using Kind = proto::ClientEvent::Kind;

struct Options {
  std::string key_file, tracker, tracker_key, run_id, run_config, token, attack;
  std::string listen = "127.0.0.1:0";
  std::string first = "leave";  // flood: the first malformed message
  std::size_t count = 2000;
  std::size_t churn_after = 1;
};

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::string hash12(const Digest& d) {
  return to_hex(d).substr(0, 12);
}

Digest filled(std::uint8_t byte) {
  Digest d;
  d.fill(byte);
  return d;
}

// A key no member holds: the i-th of a sequence.
proto::PeerKey stranger(std::uint64_t i) {
  Blake2b h;
  h.update_u64(i);
  proto::PeerKey key;
  key.bytes = h.finish();
  return key;
}

// A text field written raw (TrackerClient's encoders make text printable): a newline, a line that
// looks like the tracker's own, a terminal title, a screen clear and a colour.
constexpr std::string_view kForged =
    "bye\n2026-11-25 20:52:59.000 info  FORGED round 99 committed by 3 of a group of 3"
    "\x1b]0;FORGED\x07\x1b[2J\x1b[31m";

Bytes forged_leave() {
  ByteWriter w = proto::start_message(proto::MessageType::leave);
  w.string(kForged);
  return w.finish();
}
Bytes forged_report(const proto::PeerKey& suspect) {
  ByteWriter w = proto::start_message(proto::MessageType::misbehaviour_report);
  w.bytes(suspect.bytes);
  w.string(kForged);
  return w.finish();
}
Bytes bad_heartbeat() {
  ByteWriter w = proto::start_message(proto::MessageType::heartbeat);
  w.u16(0xBAD);  // a heartbeat is 45 bytes and more
  return w.finish();
}

class Attacker {
 public:
  Attacker(boost::asio::io_context& io, const Options& o, const secure::KeyPair& key)
      : io_(io), o_(o), key_(key), early_(1024) {
    const train::TrainConfig run = cli::load_train_config(o.run_config);
    const train::SharedState genesis = train::genesis_state(run);
    genesis_ = genesis.hash();
    state_hash_ = genesis_;
    values_ = genesis.arena(0).data().size();  // DiLoCo all-reduces Δθ: one value a parameter
    codec_ = compress::make_codec(run.strategy.codec_spec());
    algorithm_ = proto::parse_all_reduce_algorithm(run.strategy.all_reduce);
    if (o.attack == "wrong-mean" || o.attack == "disputer")
      lying_member_.emplace(
          key, o.run_id, run.strategy.codec_spec(),
          o.attack == "wrong-mean" ? sim::LyingMember::Lie::mean : sim::LyingMember::Lie::check);
    std::string advertise = o.listen;
    if (o.attack != "idle-admitted") {
      start_mesh();
      advertise = fmt::format("127.0.0.1:{}", mesh_->local_endpoint().port());
    }
    const Digest claimed = o.attack == "genesis-squat" ? Digest{} : genesis_;
    client_ = std::make_unique<proto::TrackerClient>(
        proto::TrackerClientConfig{.run_id = o.run_id,
                                   .tracker_key = secure::parse_public_key(o.tracker_key),
                                   .join = proto::JoinRequest{.software = "loco-member-attacker",
                                                              .listen_address = advertise,
                                                              .upload_bps = 100'000'000,
                                                              .credential = o.token,
                                                              .settings = train::run_settings(run),
                                                              .genesis = claimed,
                                                              .state_round = 0,
                                                              .state_hash = claimed}});
    const secure::PublicKey pin = secure::parse_public_key(o.tracker_key);
    tracker_ = std::make_unique<test::TrackerConnection>(
        io, net::resolve(io, net::parse_host_port(o.tracker)),
        net::ChannelSetup{.identity = &key,
                          .config = secure::ChannelConfig{.run_id = o.run_id},
                          .accept = [pin](const secure::PublicKey& k) { return k == pin; },
                          .peer_label = "the tracker"},
        o.attack == "idle-admitted" ? nullptr : client_.get(),
        test::TrackerConnection::Handlers{
            .on_ready =
                [this] {
                  if (o_.attack == "idle-admitted") say("admitted");
                },
            .on_event = [this](const proto::ClientEvent& e) { on_event(e); },
            .on_cut = [this] { on_cut(); }});
  }

  void start() { tracker_->connect(); }

 private:
  bool lying() const { return o_.attack == "accuse" || exchanging(); }
  // It takes part in the round's collective (with what it sends changed).
  bool exchanging() const {
    return o_.attack == "poison" || o_.attack == "wrong-mean" || o_.attack == "disputer";
  }

  void on_event(const proto::ClientEvent& e) {
    switch (e.kind) {
      case Kind::joined:
        say(fmt::format("joined shard {} of {} as {}", e.reply.shard_index, e.reply.shard_count,
                        secure::short_id(key_.public_key())));
        on_joined(e.reply);
        break;
      case Kind::refused:
        say("refused " + e.text);
        io_.stop();
        break;
      case Kind::group:
        say(fmt::format("group {} {} {}", e.group.round, e.group.attempt, e.group.members.size()));
        on_group(e.group);
        break;
      case Kind::commit:
        all_reduce_.reset();
        say(fmt::format("committed {} {}", e.commit.round, hash12(e.commit.state_hash)));
        claim(e.commit.round, e.commit.state_hash, false);
        break;
      case Kind::abort_round:
        all_reduce_.reset();
        say(fmt::format("aborted {} {}: {}", e.abort.round, e.abort.attempt, e.abort.reason));
        if (!e.abort.retry && lying()) ready();
        break;
      case Kind::judge_call: contribute_to_judge(e.judge_call); break;
      case Kind::resync:
        say(fmt::format("told to fetch {} {}", e.resync.round, hash12(e.resync.state_hash)));
        if (lying()) claim(e.resync.round, e.resync.state_hash, true);
        if (o_.attack == "future-report") report_future();
        if (o_.attack == "false-donor") ask_manifest(e.resync);
        if (o_.attack == "churn" && ++told_ == o_.churn_after) {
          client_->leave(fmt::format("back in a moment ({})", ++churned_));
          tracker_->flush();
        }
        break;
      default: break;  // views, custody requests (never answered), a tracker that went quiet
    }
  }

  void on_joined(const proto::JoinReply& reply) {
    told_ = 0;
    if (lying() && reply.committed_hash == state_hash_) ready();  // else a resync follows
    if (o_.attack == "future-report") report_future();
    if (o_.attack == "flood" && !flooded_) flood(0);
    if (o_.attack == "flood-reports") report_strangers(0);
  }

  void on_cut() {
    if (o_.attack == "churn" && churned_ > 0) {  // it left: the tracker closed the connection
      if (churned_ < o_.count) return tracker_->connect();
      say(fmt::format("churned {}", churned_));
      io_.stop();
      return;
    }
    say(fmt::format("cut off after {} messages", sent_));
    if (o_.attack == "flood" && !flooded_) {
      flooded_ = true;
      tracker_->connect();  // the same key again: the join must be refused
      return;
    }
    io_.stop();
  }

  // The state `hash` of `round`, claimed as held (a commit it computed, a state it fetched).
  void claim(std::uint64_t round, const Digest& hash, bool report) {
    state_round_ = round;
    state_hash_ = hash;
    client_->set_state(round, hash);
    if (report) client_->state_report();
    ready();
  }

  void ready() {
    client_->ready({.round = state_round_ + 1,
                    .update_norm = o_.attack == "poison" ? 0.0f : 1.0f,
                    .base_hash = state_hash_});
    tracker_->flush();
  }

  void on_group(const proto::Group& g) {
    if (exchanging()) return start_exchange(g);
    if (o_.attack != "accuse") return;
    std::vector<proto::PeerKey> others;
    for (const proto::PeerKey& k : g.members)
      if (k != key_.public_key()) others.push_back(k);
    if (others.empty()) {
      client_->round_done({.round = g.round, .attempt = g.attempt, .state_hash = filled(0x42)});
    } else {
      const proto::PeerKey named = others[turn_++ % others.size()];
      client_->round_failed({.round = g.round,
                             .attempt = g.attempt,
                             .reason = "its chunk held NaN",
                             .suspect = named});
      say(fmt::format("accused {} {} {}", g.round, g.attempt, secure::short_id(named)));
    }
    tracker_->flush();
  }

  // --- poison, wrong-mean and disputer: the run's all-reduce, with 1e30 or zeros for this member's
  // update.
  void start_mesh() {
    mesh_ = net::PeerMesh::create(
        io_, net::resolve(io_, net::parse_host_port(o_.listen, /*allow_any_port=*/true)),
        net::PeerMeshConfig{
            .setup = {.identity = &key_,
                      .config = secure::ChannelConfig{.run_id = o_.run_id},
                      // The members, and the tracker's reachability probe (as loco-peer's).
                      .accept =
                          [this](const secure::PublicKey& k) {
                            return k == secure::parse_public_key(o_.tracker_key) ||
                                   client_->is_member(k);
                          },
                      .peer_label = {}},
            .bundle = {},
            .link = nullptr,
            .limits = net::ListenerLimits::peer_defaults(),
            .prober = secure::parse_public_key(o_.tracker_key)},
        net::PeerMeshHandlers{
            .on_message = [this](const proto::PeerKey& from, proto::MessageType type,
                                 std::span<const std::byte> body) { on_mesh(from, type, body); },
            .on_lost =
                [this](const proto::PeerKey& peer, const std::string& why) {
                  if (!all_reduce_ || !running() || !all_reduce_->needs_link_to(peer)) return;
                  all_reduce_->fail("lost the connection: " + why, peer);
                  pump();
                }});
    mesh_->start();
  }

  void start_exchange(const proto::Group& g) {
    const auto me = std::find(g.members.begin(), g.members.end(), key_.public_key());
    if (me == g.members.end()) return;
    id_ = {g.round, g.attempt};
    members_ = g.members;
    reported_ = false;
    work_.assign(values_, o_.attack == "poison" ? 1e30f : 0.0f);
    if (lying_member_)
      lying_member_->begin(g.members.size(), static_cast<std::size_t>(me - g.members.begin()),
                           values_, std::size_t{1} << 16);
    all_reduce_ = proto::make_all_reduce(
        algorithm_,
        proto::AllReduceConfig{
            .round = g.round,
            .attempt = g.attempt,
            .members = g.members,
            .self = static_cast<std::size_t>(me - g.members.begin()),
            .chunk_values = std::size_t{1} << 16,
            .codec = codec_.get(),
            .seed = g.round * 1000 + g.attempt,
            .median_norm = g.median_norm,
            .norm_limit = g.norm_limit,
            .trim = g.trim,
            .weights = {},
            .buffers = nullptr,
            .check_owners = g.check_owners && algorithm_ == proto::AllReduceAlgorithm::direct,
            .signer = &key_,
            .run_id = o_.run_id},
        work_, work_);
    all_reduce_->start();
    for (const proto::EarlyMessages::Message& m : early_.take(id_))
      all_reduce_->on_message(m.from, m.body);
    pump();
  }

  bool running() const { return !all_reduce_->done() && !all_reduce_->failure(); }

  // A dispute of its attempt is judged (proto/segment_judge.hpp): it sends the judge its chunks of
  // the segment as its collective encoded them (its update of zeros or 1e30, with the attempt's
  // seed), and, as the segment's owner or checker, the contribution statements it summed; its lie
  // is the mean, not its contribution. Called as the judge itself, it says nothing (the tracker
  // then counts the dispute).
  void contribute_to_judge(const proto::JudgeCall& call) {
    if (!exchanging() || !all_reduce_ ||
        id_ != proto::EarlyMessages::Id{call.round, call.attempt} ||
        call.judge == key_.public_key() || call.segment >= members_.size())
      return;
    const std::size_t n = members_.size();
    const std::size_t unit = proto::direct_chunk_values(values_, std::size_t{1} << 16);
    // Its update as start_exchange() made it (work_ holds the mean by now).
    const std::vector<float> update(values_, o_.attack == "poison" ? 1e30f : 0.0f);
    const proto::EncodedUpdate encoded(*codec_, update, unit, call.round * 1000 + call.attempt,
                                       key_.public_key());
    const std::size_t begin = proto::segment_begin(values_, n, call.segment, unit);
    const std::size_t end = proto::segment_begin(values_, n, call.segment + 1, unit);
    const std::string address = address_of(call.judge);
    for (std::size_t at = begin, k = 0; at < end; at += unit, ++k) {
      const auto bytes = encoded.unit(at / unit);
      mesh_->send(call.judge, address, proto::MessageType::judge_chunk,
                  proto::encode(proto::JudgeChunk{.round = call.round,
                                                  .attempt = call.attempt,
                                                  .segment = call.segment,
                                                  .chunk = static_cast<std::uint32_t>(k),
                                                  .bytes = {bytes.begin(), bytes.end()}}));
    }
    if (algorithm_ != proto::AllReduceAlgorithm::direct) return;
    auto inputs = static_cast<const proto::DirectAllReduce&>(*all_reduce_).inputs_of(call.segment);
    if (inputs)
      mesh_->send(call.judge, address, proto::MessageType::judge_inputs,
                  proto::encode(proto::JudgeInputs{.round = call.round,
                                                   .attempt = call.attempt,
                                                   .segment = call.segment,
                                                   .inputs = std::move(*inputs)}));
  }

  void on_mesh(const proto::PeerKey& from, proto::MessageType type,
               std::span<const std::byte> body) {
    if (o_.attack == "false-donor") return serve_falsely(from, type, body);
    if (type != proto::MessageType::ring_chunk || !exchanging()) return;
    try {
      std::span<const std::byte> payload;
      const proto::ChunkHeader h = proto::decode_chunk(body, payload);
      const proto::EarlyMessages::Id id{h.round, h.attempt};
      if (all_reduce_ && running() && id == id_) {
        all_reduce_->on_message(from, body);
        pump();
      } else if (id > id_) {
        early_.keep(id, from, type, body);
      }
    } catch (const Error&) {  // a malformed chunk: as loco-peer does
      mesh_->drop(from);
    }
  }

  void pump() {
    while (auto t = all_reduce_->poll_transmit())
      mesh_->send(t->to, address_of(t->to), proto::MessageType::ring_chunk,
                  lying_member_ ? lying_member_->rewrite(std::move(t->body)) : std::move(t->body));
    if (reported_) return;
    if (const auto& failure = all_reduce_->failure()) {
      reported_ = true;
      client_->round_failed({.round = id_.first,
                             .attempt = id_.second,
                             .reason = failure->reason,
                             .suspect = failure->suspect});
    } else if (all_reduce_->done()) {
      reported_ = true;
      client_->round_done({.round = id_.first, .attempt = id_.second, .state_hash = filled(0x42)});
    }
    tracker_->flush();
  }

  std::string address_of(const proto::PeerKey& peer) const {
    const proto::Member* m = client_->member(peer);
    return m != nullptr ? m->address : std::string{};
  }

  // --- false-donor: the true manifest, from an honest holder, and chunks of zeros.
  void ask_manifest(const proto::Resync& resync) {
    if (serving_ || resync.donors.empty()) return;
    wanted_ = resync;
    const proto::Donor& donor = resync.donors.front();  // the tracker itself has no address
    if (donor.address.empty()) return;
    mesh_->send(donor.key, donor.address, proto::MessageType::state_request,
                proto::encode_state_request(resync.round, resync.state_hash));
  }

  void serve_falsely(const proto::PeerKey& from, proto::MessageType type,
                     std::span<const std::byte> body) {
    try {
      if (type == proto::MessageType::state_manifest && !serving_) {
        proto::StateManifest manifest = proto::decode_manifest(body);
        if (manifest.round != wanted_.round || manifest.state_hash() != wanted_.state_hash) return;
        zeros_.assign(manifest.total_bytes, std::byte{0});
        server_.serve(std::move(manifest), proto::StateBytes({std::span<const std::byte>(zeros_)}));
        serving_ = true;
        state_round_ = wanted_.round;
        state_hash_ = wanted_.state_hash;
        client_->set_state(state_round_, state_hash_);
        client_->state_report();
        tracker_->flush();
        say(fmt::format("holds a false copy of {} {}", state_round_, hash12(state_hash_)));
      } else if (type == proto::MessageType::state_request ||
                 type == proto::MessageType::chunk_request) {
        server_.on_message(from, type, body);
      }
    } catch (const Error&) {  // a malformed message: as loco-peer does
      mesh_->drop(from);
      return;
    }
    while (auto t = server_.poll_transmit()) {
      if (t->type == proto::MessageType::state_chunk)
        say("served a false chunk to " + secure::short_id(t->to));
      mesh_->send(t->to, address_of(t->to), t->type, std::move(t->body));
    }
  }

  // --- future-report
  void report_future() {
    const std::uint64_t round = std::uint64_t{1} << 63;
    client_->set_state(round, filled(0x66));
    client_->state_report();
    tracker_->flush();
    say(fmt::format("reported round {}", round));
  }

  // --- flood: malformed messages, one at a time as the connection takes them, until cut off.
  void flood(std::size_t i) {
    if (flooded_ || i >= 100'000) return;
    const std::size_t first = o_.first == "leave" ? 0 : o_.first == "report" ? 1 : 2;
    const std::size_t kind = (first + i) % 3;
    const proto::MessageType type = kind == 0   ? proto::MessageType::leave
                                    : kind == 1 ? proto::MessageType::misbehaviour_report
                                                : proto::MessageType::heartbeat;
    Bytes body = kind == 0   ? forged_leave()
                 : kind == 1 ? forged_report(stranger(i))
                             : bad_heartbeat();
    tracker_->raw(type, std::move(body), [this, i] {
      ++sent_;
      boost::asio::post(io_, [this, i] { flood(i + 1); });
    });
  }

  // --- flood-reports: well-formed reports naming keys of no member, then a malformed message,
  // which the tracker reads (and cuts the connection for) once it has read every report.
  void report_strangers(std::size_t i) {
    if (i == o_.count) {
      tracker_->raw(proto::MessageType::heartbeat, bad_heartbeat(), [this] { ++sent_; });
      return;
    }
    const std::string reason = fmt::format("report {}: {}", i, std::string(1000, 'x'));
    tracker_->raw(
        proto::MessageType::misbehaviour_report,
        proto::encode(proto::MisbehaviourReport{.suspect = stranger(i), .reason = reason}),
        [this, i] {
          ++sent_;
          boost::asio::post(io_, [this, i] { report_strangers(i + 1); });
        });
  }

  boost::asio::io_context& io_;
  const Options& o_;
  const secure::KeyPair& key_;
  Digest genesis_{};
  std::uint64_t state_round_ = 0;
  Digest state_hash_{};
  std::size_t values_ = 0;
  std::unique_ptr<compress::Codec> codec_;
  proto::AllReduceAlgorithm algorithm_{};
  std::unique_ptr<proto::TrackerClient> client_;
  std::unique_ptr<test::TrackerConnection> tracker_;
  std::shared_ptr<net::PeerMesh> mesh_;
  std::size_t turn_ = 0;  // accuse: whom it names next
  std::unique_ptr<proto::AllReduce> all_reduce_;
  std::optional<sim::LyingMember> lying_member_;  // wrong-mean, disputer
  std::vector<float> work_;
  proto::EarlyMessages::Id id_{};
  std::vector<proto::PeerKey> members_;  // the group of id_
  bool reported_ = false;
  proto::EarlyMessages early_;
  std::size_t sent_ = 0;     // raw messages the connection took
  bool flooded_ = false;     // flood: cut off once, joining again
  std::size_t told_ = 0;     // churn: resyncs since it joined
  std::size_t churned_ = 0;  // churn: times it left
  proto::Resync wanted_{};   // false-donor: the state it was told to fetch
  bool serving_ = false;     // ... and claims once it has that state's true manifest
  std::vector<std::byte> zeros_;
  proto::StateServer server_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loco-member-attacker: a member that lies, for the tracker's tests"};
  Options o;
  app.add_option("--key", o.key_file)->required();
  app.add_option("--tracker", o.tracker)->required();
  app.add_option("--tracker-key", o.tracker_key)->required();
  app.add_option("--run-id", o.run_id)->required();
  app.add_option("--run-config", o.run_config)->required();
  app.add_option("--token", o.token);
  app.add_option("--listen", o.listen);
  app.add_option("--attack", o.attack)
      ->required()
      ->check(CLI::IsMember({"accuse", "poison", "wrong-mean", "disputer", "genesis-squat", "flood",
                             "flood-reports", "idle", "idle-admitted", "future-report", "churn",
                             "false-donor"}));
  app.add_option("--first", o.first, "flood: the first malformed message")
      ->check(CLI::IsMember({"leave", "report", "heartbeat"}));
  app.add_option("--count", o.count, "flood-reports: how many reports; churn: how many leaves");
  app.add_option("--churn-after", o.churn_after, "churn: leave at the K-th resync since joining")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  loco::init_logging("info", "text");
  try {
    const auto key = loco::secure::read_key_file(o.key_file, loco::secure::KeyOwner::peer);
    boost::asio::io_context io;
    Attacker attacker(io, o, key);
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& error, int) {
      if (!error) io.stop();
    });
    attacker.start();
    io.run();
    return 0;
  } catch (const loco::Error& e) {
    spdlog::error("loco-member-attacker: {}", e.what());
    return 1;
  }
}
