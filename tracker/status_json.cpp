#include "tracker/status_json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <string_view>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/core/log.hpp"
#include "loco/core/utf8.hpp"

namespace loco::tracker {
namespace {

// Appends one object's "key":value pairs to `out`, with the commas between them.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }

  void text(std::string_view key, std::string_view value) {
    this->key(key);
    out_ += '"';
    out_ += json_escape(printable(value));  // peer text shows its hidden characters escaped
    out_ += '"';
  }
  void number(std::string_view key, std::uint64_t value) {
    this->key(key);
    fmt::format_to(std::back_inserter(out_), "{}", value);
  }
  // Shortest round-trip form; JSON has no NaN or infinity, so those are null.
  template <typename Float>
  void real(std::string_view key, Float value) {
    this->key(key);
    if (std::isfinite(value)) {
      fmt::format_to(std::back_inserter(out_), "{}", value);
    } else {
      out_ += "null";
    }
  }
  void boolean(std::string_view key, bool value) {
    this->key(key);
    out_ += value ? "true" : "false";
  }
  // Writes the key; the caller appends the value (an object or array) to the returned string.
  std::string& nested(std::string_view key) {
    this->key(key);
    return out_;
  }
  void close() { out_ += '}'; }

 private:
  void key(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += key;  // our own snake_case names: nothing to escape
    out_ += "\":";
  }

  std::string& out_;
  bool first_ = true;
};

void write_heartbeat(std::string& out, const proto::Heartbeat& h) {
  ObjectWriter o(out);
  o.number("state_round", h.state_round);
  o.number("inner_step", h.inner_step);
  o.real("loss", h.loss);
  o.real("tokens_per_s", h.tokens_per_s);
  o.number("bytes_sent", h.bytes_sent);
  o.number("bytes_received", h.bytes_received);
  o.real("network_wait_s", h.network_wait_s);
  o.number("bytes_relayed", h.bytes_relayed);
  o.close();
}

void write_member(std::string& out, const proto::MemberStatus& m) {
  ObjectWriter o(out);
  o.text("peer_id", m.peer_id);
  o.text("public_key", m.public_key);
  o.text("address", m.address);
  o.number("shard", m.shard);
  o.real("joined_s_ago", m.joined_s_ago);
  o.real("last_seen_s_ago", m.last_seen_s_ago);
  o.number("state_round", m.state_round);
  o.boolean("in_sync", m.in_sync);
  o.boolean("in_round", m.in_round);
  o.text("reachability", proto::reachability_name(m.reachability));
  write_heartbeat(o.nested("last_heartbeat"), m.last);
  o.close();
}

void write_round(std::string& out, const proto::RoundRecord& r) {
  ObjectWriter o(out);
  o.number("round", r.round);
  o.number("unix_ms", r.unix_ms);
  o.number("group_size", r.group_size);
  o.real("mean_loss", r.mean_loss);
  o.text("state_hash", to_hex(r.state_hash));
  o.close();
}

void write_lost(std::string& out, const proto::LostRounds& l) {
  ObjectWriter o(out);
  o.number("first", l.first);
  o.number("last", l.last);
  o.number("went_back_to", l.went_back_to);
  o.number("unix_ms", l.unix_ms);
  o.close();
}

void write_replica(std::string& out, const proto::ReplicaStatus& r) {
  ObjectWriter o(out);
  o.text("name", r.name);
  o.number("term", r.term);
  o.boolean("leads", r.leads);
  o.close();
}

void write_failover(std::string& out, const proto::Failover& f) {
  ObjectWriter o(out);
  o.number("unix_ms", f.unix_ms);
  o.text("from", f.from);
  o.number("from_term", f.from_term);
  o.number("to_term", f.to_term);
  o.number("leaderless_ms", f.leaderless_ms);
  o.close();
}

template <typename T, typename Write>
void write_array(std::string& out, const std::vector<T>& items, Write write) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    write(out, items[i]);
  }
  out += ']';
}

}  // namespace

std::string render_status_json(const proto::TrackerStatus& s) {
  std::string out;
  ObjectWriter o(out);
  o.text("run_id", s.run_id);
  o.number("epoch", s.epoch);
  if (!s.replica.empty()) {
    o.text("replica", s.replica);
    o.number("replica_term", s.replica_term);
    o.number("leading_since_ms", s.leading_since_ms);
    write_array(o.nested("replicas"), s.replicas, write_replica);
    write_failover(o.nested("last_failover"), s.last_failover);
  }
  o.number("committed_round", s.committed_round);
  o.text("committed_hash", s.committed_hash);
  o.number("next_round", s.next_round);
  o.number("final_round", s.final_round);
  o.boolean("run_ended", s.run_ended);
  o.text("phase", s.phase);
  o.number("attempt", s.attempt);
  o.number("rounds_committed", s.rounds_committed);
  o.number("rounds_aborted", s.rounds_aborted);
  o.number("peers_joined", s.peers_joined);
  o.number("peers_refused", s.peers_refused);
  o.number("peers_evicted", s.peers_evicted);
  o.number("misbehaviours", s.misbehaviours);
  o.number("members_reachable", s.members_reachable);
  o.number("members_unreachable", s.members_unreachable);
  o.number("probes_reached", s.probes_reached);
  o.number("probes_unreached", s.probes_unreached);
  o.number("members_left_out", s.members_left_out);
  o.number("relayed_links", s.relayed_links);
  o.number("relays_blamed", s.relays_blamed);
  o.number("round_seconds", s.round_seconds);
  o.number("bytes_sent", s.bytes_sent);
  o.number("bytes_received", s.bytes_received);
  o.number("bytes_relayed", s.bytes_relayed);
  o.real("tokens_per_s", s.tokens_per_s);
  o.real("spread", s.spread);
  o.number("custody_round", s.custody_round);
  o.number("custody_state_bytes", s.custody_state_bytes);
  o.number("custody_pulled_bytes", s.custody_pulled_bytes);
  write_array(o.nested("members"), s.members, write_member);
  write_array(o.nested("history"), s.history, write_round);
  write_array(o.nested("lost_rounds"), s.lost_rounds, write_lost);
  o.close();
  return out;
}

}  // namespace loco::tracker
