#include "tracker/status_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <string_view>

#include "loco/core/utf8.hpp"

namespace loco::tracker {
namespace {

using proto::MemberStatus;
using proto::TrackerStatus;

template <typename Of>
struct Metric {
  std::string_view name;
  std::string_view type;  // "gauge" or "counter"
  std::string_view help;
  std::function<double(const Of&)> value;
};

double last_round_loss(const TrackerStatus& s) {
  return s.history.empty() ? NAN : s.history.back().mean_loss;
}

std::size_t count_members(const TrackerStatus& s, bool MemberStatus::*flag) {
  return static_cast<std::size_t>(
      std::count_if(s.members.begin(), s.members.end(), [&](const auto& m) { return m.*flag; }));
}

const Metric<TrackerStatus> kRunMetrics[] = {
    {"loco_tracker_epoch", "gauge", "Membership epoch: grows with every change of members.",
     [](const auto& s) { return s.epoch; }},
    {"loco_tracker_members", "gauge", "Peers admitted to the run.",
     [](const auto& s) { return s.members.size(); }},
    {"loco_tracker_members_in_sync", "gauge", "Members holding the run's current state.",
     [](const auto& s) { return count_members(s, &MemberStatus::in_sync); }},
    {"loco_tracker_members_in_round", "gauge", "Members in the running round's group.",
     [](const auto& s) { return count_members(s, &MemberStatus::in_round); }},
    {"loco_tracker_members_reachable", "gauge",
     "Members the tracker's probe reached at their address.",
     [](const auto& s) { return s.members_reachable; }},
    {"loco_tracker_members_unreachable", "gauge",
     "Members the tracker's probe could not reach: they dial out.",
     [](const auto& s) { return s.members_unreachable; }},
    {"loco_tracker_probes_reached_total", "counter", "Reachability probes that connected.",
     [](const auto& s) { return s.probes_reached; }},
    {"loco_tracker_probes_unreached_total", "counter",
     "Reachability probes that failed, timed out or were not made (probed too recently).",
     [](const auto& s) { return s.probes_unreached; }},
    {"loco_tracker_members_left_out_total", "counter",
     "Unreachable members left out of a round's group (more than its relays' budgets link).",
     [](const auto& s) { return s.members_left_out; }},
    {"loco_tracker_relayed_links_total", "counter",
     "Links between two unreachable members planned through a relay, over every attempt.",
     [](const auto& s) { return s.relayed_links; }},
    {"loco_tracker_relays_blamed_total", "counter",
     "Relays blamed for a relayed link (they relay nothing more that round).",
     [](const auto& s) { return s.relays_blamed; }},
    {"loco_tracker_committed_round", "gauge", "The last committed round.",
     [](const auto& s) { return s.committed_round; }},
    {"loco_tracker_next_round", "gauge", "The round being formed or run.",
     [](const auto& s) { return s.next_round; }},
    {"loco_tracker_final_round", "gauge",
     "The run's final round, from its config's train.steps (0: none declared).",
     [](const auto& s) { return s.final_round; }},
    {"loco_tracker_run_ended", "gauge", "1 once the run's final round is committed.",
     [](const auto& s) { return s.run_ended ? 1 : 0; }},
    {"loco_tracker_round_attempt", "gauge", "Attempt number of the running round (0: none).",
     [](const auto& s) { return s.attempt; }},
    {"loco_tracker_last_round_mean_loss", "gauge",
     "Mean loss of the last committed round's group (NaN when unknown).", last_round_loss},
    {"loco_tracker_rounds_committed_total", "counter", "Rounds committed since start.",
     [](const auto& s) { return s.rounds_committed; }},
    {"loco_tracker_rounds_aborted_total", "counter", "Round attempts aborted since start.",
     [](const auto& s) { return s.rounds_aborted; }},
    {"loco_tracker_peers_joined_total", "counter", "Peers admitted since start.",
     [](const auto& s) { return s.peers_joined; }},
    {"loco_tracker_peers_refused_total", "counter", "Joins refused since start.",
     [](const auto& s) { return s.peers_refused; }},
    {"loco_tracker_peers_evicted_total", "counter", "Members evicted since start.",
     [](const auto& s) { return s.peers_evicted; }},
    {"loco_tracker_misbehaviours_total", "counter", "Protocol violations seen since start.",
     [](const auto& s) { return s.misbehaviours; }},
    {"loco_tracker_sent_bytes", "gauge", "Sum of the bytes the members report having sent.",
     [](const auto& s) { return s.bytes_sent; }},
    {"loco_tracker_received_bytes", "gauge", "Sum of the bytes the members report having received.",
     [](const auto& s) { return s.bytes_received; }},
    {"loco_tracker_relayed_bytes", "gauge",
     "Sum of the bytes the members report having relayed for unreachable ones.",
     [](const auto& s) { return s.bytes_relayed; }},
    {"loco_tracker_tokens_per_second", "gauge", "Sum of the members' training throughput.",
     [](const auto& s) { return s.tokens_per_s; }},
    {"loco_tracker_spread", "gauge",
     "RMS distance of the members' parameters from their mean, per value (gossip mode).",
     [](const auto& s) { return s.spread; }},
    {"loco_tracker_custody_round", "gauge",
     "Round of the newest checkpoint custody copy the tracker holds (0: none).",
     [](const auto& s) { return s.custody_round; }},
    {"loco_tracker_custody_pulled_bytes_total", "counter",
     "Bytes of state pulled for checkpoint custody since start.",
     [](const auto& s) { return s.custody_pulled_bytes; }},
    {"loco_tracker_heap_bytes", "gauge",
     "Bytes the tracker's allocations hold (not what the allocator keeps after a free).",
     [](const auto& s) { return s.heap_bytes; }},
    {"loco_tracker_replica_term", "gauge",
     "A replica's term as the run's leader (etcd revision; 0: a single tracker).",
     [](const auto& s) { return s.replica_term; }},
    {"loco_tracker_leading_since_seconds", "gauge",
     "When this replica took the lead, Unix seconds (0: a single tracker).",
     [](const auto& s) { return s.leading_since_ms / 1000; }},
    {"loco_tracker_replicas", "gauge",
     "Replicas in the run's election as the leader last looked, itself too (0: a single tracker).",
     [](const auto& s) { return s.replicas.size(); }},
    {"loco_tracker_last_failover_seconds", "gauge",
     "When this replica's look found it leading, Unix seconds (0: a single tracker).",
     [](const auto& s) { return s.last_failover.unix_ms / 1000; }},
    {"loco_tracker_last_failover_from_term", "gauge",
     "The term of the leader this replica saw before it led (0: none seen).",
     [](const auto& s) { return s.last_failover.from_term; }},
    {"loco_tracker_last_failover_leaderless_seconds", "gauge",
     "From the last look that saw the previous leader to this replica's lead.",
     [](const auto& s) { return s.last_failover.leaderless_ms / 1000.0; }},
};

// Each member's figures as of its last heartbeat; labelled {peer="<short id>"}.
const Metric<MemberStatus> kMemberMetrics[] = {
    {"loco_tracker_member_shard", "gauge", "The member's data shard.",
     [](const auto& m) { return m.shard; }},
    {"loco_tracker_member_state_round", "gauge", "Round of the state the member holds.",
     [](const auto& m) { return m.state_round; }},
    {"loco_tracker_member_in_sync", "gauge", "1 when the member holds the current state.",
     [](const auto& m) { return m.in_sync; }},
    {"loco_tracker_member_in_round", "gauge", "1 when the member is in the running round.",
     [](const auto& m) { return m.in_round; }},
    {"loco_tracker_member_reachable", "gauge",
     "1 when the tracker's probe reached the member, 0 when not (or not yet).",
     [](const auto& m) { return m.reachability == proto::Reachability::reachable; }},
    {"loco_tracker_member_last_seen_seconds", "gauge", "Seconds since the member was last heard.",
     [](const auto& m) { return m.last_seen_s_ago; }},
    {"loco_tracker_member_inner_step", "gauge", "The member's inner optimizer step.",
     [](const auto& m) { return m.last.inner_step; }},
    {"loco_tracker_member_loss", "gauge", "The member's training loss.",
     [](const auto& m) { return m.last.loss; }},
    {"loco_tracker_member_tokens_per_second", "gauge", "The member's training throughput.",
     [](const auto& m) { return m.last.tokens_per_s; }},
    {"loco_tracker_member_network_wait_seconds", "gauge",
     "Time the member reports waiting on the network.",
     [](const auto& m) { return m.last.network_wait_s; }},
    {"loco_tracker_member_sent_bytes_total", "counter", "Bytes the member reports having sent.",
     [](const auto& m) { return m.last.bytes_sent; }},
    {"loco_tracker_member_received_bytes_total", "counter",
     "Bytes the member reports having received.",
     [](const auto& m) { return m.last.bytes_received; }},
    {"loco_tracker_member_relayed_bytes_total", "counter",
     "Bytes the member reports having relayed for unreachable members.",
     [](const auto& m) { return m.last.bytes_relayed; }},
};

// A label value: made printable (core/utf8.hpp), then backslash, double quote and newline
// escaped, as the format asks.
std::string label_value(std::string_view text) {
  std::string out;
  for (const char c : printable(text)) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void write_header(std::string& out, std::string_view name, std::string_view type,
                  std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// `labels` is "" or "{...}". Values use Prometheus's spellings of the non-finite numbers.
void write_sample(std::string& out, std::string_view name, std::string_view labels, double v) {
  fmt::format_to(std::back_inserter(out), "{}{} ", name, labels);
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v != std::floor(v) && static_cast<double>(static_cast<float>(v)) == v) {
    // A fraction that came from a peer as a float: 0.8f reads "0.8", not "0.800000011920929".
    // (Whole numbers keep every digit: a byte count must not round to a float's precision.)
    fmt::format_to(std::back_inserter(out), "{}", static_cast<float>(v));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
  out += '\n';
}

}  // namespace

std::string render_status_metrics(const TrackerStatus& status) {
  std::string out;
  write_header(out, "loco_tracker_info", "gauge", "The run this tracker serves (always 1).");
  write_sample(out, "loco_tracker_info",
               fmt::format("{{run_id=\"{}\"}}", label_value(status.run_id)), 1);
  for (const auto& metric : kRunMetrics) {
    write_header(out, metric.name, metric.type, metric.help);
    write_sample(out, metric.name, "", metric.value(status));
  }
  for (const auto& metric : kMemberMetrics) {
    write_header(out, metric.name, metric.type, metric.help);
    for (const auto& member : status.members) {
      write_sample(out, metric.name, fmt::format("{{peer=\"{}\"}}", label_value(member.peer_id)),
                   metric.value(member));
    }
  }
  return out;
}

}  // namespace loco::tracker
