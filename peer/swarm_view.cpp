#include "swarm_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace loco::peer {
namespace {

// sscanf wants a terminated string; %n tells how far the whole pattern matched.
std::optional<PeerProgress> scan_progress(const std::string& text) {
  PeerProgress p;
  unsigned long long round = 0, step = 0, steps = 0;
  int end = -1;
  std::sscanf(text.c_str(),
              "round %llu | step %llu/%llu | loss %lf | %lf tok/s | sent %lf MB recv %lf MB | net "
              "wait %lf s%n",
              &round, &step, &steps, &p.loss, &p.tokens_per_s, &p.sent_mb, &p.received_mb,
              &p.wait_s, &end);
  if (end < 0) return std::nullopt;
  p.round = round;
  p.step = step;
  p.steps = steps;
  return p;
}

// "1.2 3.4 -": one column per peer, a dash for a peer without a value.
template <typename F>
std::string columns(const std::vector<std::optional<PeerProgress>>& last, const char* format,
                    F value) {
  std::string out;
  for (const auto& p : last) {
    if (!out.empty()) out += ' ';
    out += p ? fmt::format(fmt::runtime(format), value(*p)) : "-";
  }
  return out;
}

std::string range(std::uint64_t low, std::uint64_t high) {
  return low == high ? fmt::format("{}", low) : fmt::format("{}-{}", low, high);
}

}  // namespace

std::optional<PeerProgress> parse_progress(std::string_view line) {
  // The message follows the log's time and level.
  const auto at = line.find("round ");
  if (at == std::string_view::npos) return std::nullopt;
  return scan_progress(std::string(line.substr(at)));
}

std::optional<PeerSummary> parse_summary(std::string_view line) {
  const std::string text(line);
  PeerSummary s;
  char id[13] = {};
  unsigned long long round = 0, step = 0;
  int head = -1;
  std::sscanf(text.c_str(), "peer %12[0-9a-f]: round %llu, step %llu, validation loss %lf%n", id,
              &round, &step, &s.val_loss, &head);
  if (head < 0) return std::nullopt;
  std::size_t at = static_cast<std::size_t>(head);
  double floor = 0;
  int floor_end = -1;
  std::sscanf(text.c_str() + at, " (floor %lf)%n", &floor, &floor_end);
  if (floor_end >= 0) {
    s.floor = floor;
    at += static_cast<std::size_t>(floor_end);
  }
  char state[17] = {};
  int tail = -1;
  std::sscanf(text.c_str() + at, ", sent %lf MB, received %lf MB, state %16[0-9a-f]%n", &s.sent_mb,
              &s.received_mb, state, &tail);
  if (tail < 0) return std::nullopt;
  s.id = id;
  s.round = round;
  s.step = step;
  s.state = state;
  return s;
}

SwarmView::SwarmView(std::size_t peers) : peers_(peers) {}

std::optional<std::string> SwarmView::take_line(std::size_t index, std::string_view line,
                                                Clock::time_point now) {
  Peer& peer = peers_.at(index);
  if (auto summary = parse_summary(line)) {
    peer.summary = std::move(summary);
    return std::nullopt;
  }
  const auto progress = parse_progress(line);
  if (!progress) return std::nullopt;
  if (!peer.first) peer.first = progress;
  peer.last = progress;
  peer.fresh = true;
  if (!pending_since_) pending_since_ = now;
  const bool everyone =
      std::all_of(peers_.begin(), peers_.end(), [](const Peer& p) { return p.fresh || p.ended; });
  if (!everyone) return std::nullopt;
  return render();
}

void SwarmView::peer_ended(std::size_t index, std::string failure) {
  peers_.at(index).ended = true;
  peers_.at(index).failure = std::move(failure);
}

std::optional<std::string> SwarmView::poll(Clock::time_point now) {
  if (!pending_since_ || now - *pending_since_ < kMaxDelay) return std::nullopt;
  return render();
}

std::string SwarmView::render() {
  std::vector<std::optional<PeerProgress>> last;
  std::uint64_t low = UINT64_MAX, high = 0, step = UINT64_MAX, steps = 0;
  for (Peer& p : peers_) {
    last.push_back(p.last);
    p.fresh = false;
    if (!p.last) continue;
    low = std::min(low, p.last->round);
    high = std::max(high, p.last->round);
    step = std::min(step, p.last->step);
    steps = std::max(steps, p.last->steps);
  }
  pending_since_.reset();
  return fmt::format(
      "round {:>4} | step {:>5}/{} | loss {} | sent MB {} | recv MB {} | net wait s {}",
      range(low, high), step, steps,
      columns(last, "{:.3f}", [](const PeerProgress& p) { return p.loss; }),
      columns(last, "{:.1f}", [](const PeerProgress& p) { return p.sent_mb; }),
      columns(last, "{:.1f}", [](const PeerProgress& p) { return p.received_mb; }),
      columns(last, "{:.1f}", [](const PeerProgress& p) { return p.wait_s; }));
}

std::string SwarmView::summary() const {
  std::string out = fmt::format("{:>4}  {:<12}  {:>10}  {:>10}  {:>7}  {:>11}  {:>7}  {:>7}  {}\n",
                                "peer", "id", "first loss", "validation", "floor", "above floor",
                                "sent MB", "recv MB", "state");
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    const Peer& p = peers_[i];
    const std::string first = p.first ? fmt::format("{:.4f}", p.first->loss) : "-";
    if (!p.summary) {
      out += fmt::format("{:>4}  {:<12}  {:>10}  {}\n", i + 1, "-", first,
                         p.failure.empty() ? "no summary (stopped before joining)" : p.failure);
      continue;
    }
    const PeerSummary& s = *p.summary;
    out +=
        fmt::format("{:>4}  {:<12}  {:>10}  {:>10.4f}  {:>7}  {:>11}  {:>7.1f}  {:>7.1f}  {}\n",
                    i + 1, s.id, first, s.val_loss, s.floor ? fmt::format("{:.4f}", *s.floor) : "-",
                    s.floor ? fmt::format("{:+.1f}%", 100.0 * (s.val_loss / *s.floor - 1.0)) : "-",
                    s.sent_mb, s.received_mb, s.state);
    if (!p.failure.empty()) out += fmt::format("      {}\n", p.failure);
  }
  if (same_state()) {
    out += fmt::format("all {} peers hold the same state {}\n", peers_.size(),
                       peers_.front().summary->state);
  } else {
    out += "the peers do NOT all hold the same state\n";
  }
  return out;
}

bool SwarmView::same_state() const {
  return !peers_.empty() && std::all_of(peers_.begin(), peers_.end(), [this](const Peer& p) {
    return p.summary && p.summary->state == peers_.front().summary->state;
  });
}

}  // namespace loco::peer
