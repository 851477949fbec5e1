#pragma once
// loco-swarm's picture of its peers, built from the lines they print (each one line, shown here
// in two): loco-peer's progress line, in its log after the time and level,
//
//   round    3 | step     60/300 | loss 2.4120 | 5120 tok/s |
//     sent 0.8 MB recv 0.8 MB | net wait 0.3 s
//
// and its last line, on stdout,
//
//   peer 1a2b3c4d5e6f: round 15, step 300, validation loss 1.4321 (floor 1.3850),
//     sent 1.2 MB, received 1.2 MB, state 0123456789abcdef
//
// It renders one combined progress line per round (or every few seconds when the peers drift
// apart), and the final summary. No clock and no I/O: the caller passes the time and prints.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loco::peer {

struct PeerProgress {
  std::uint64_t round = 0;
  std::uint64_t step = 0;
  std::uint64_t steps = 0;
  double loss = 0;
  double tokens_per_s = 0;
  double sent_mb = 0;
  double received_mb = 0;
  double wait_s = 0;
};

struct PeerSummary {
  std::string id;  // short id: 12 hex digits
  std::uint64_t round = 0;
  std::uint64_t step = 0;
  double val_loss = 0;
  std::optional<double> floor;  // the corpus's entropy floor, when known
  double sent_mb = 0;
  double received_mb = 0;
  std::string state;  // the first 16 hex digits of the state hash
};

// Nothing when the line is not one of those above.
std::optional<PeerProgress> parse_progress(std::string_view line);
std::optional<PeerSummary> parse_summary(std::string_view line);

class SwarmView {
 public:
  using Clock = std::chrono::steady_clock;
  // A progress line is rendered at the latest this long after the first new report in it.
  static constexpr std::chrono::seconds kMaxDelay{5};

  explicit SwarmView(std::size_t peers);

  // Takes one line of peer `index`'s output. Returns a combined progress line when every peer
  // still running has reported since the last one.
  std::optional<std::string> take_line(std::size_t index, std::string_view line,
                                       Clock::time_point now);
  // Records that the peer's process ended (`failure` empty when it succeeded).
  void peer_ended(std::size_t index, std::string failure);
  // A combined line of the reports so far, when the oldest unrendered one is kMaxDelay old.
  std::optional<std::string> poll(Clock::time_point now);

  // The final table: each peer's first loss, validation loss, floor, bytes, state, and failures.
  std::string summary() const;
  // True when every peer printed its summary, all with the same state hash.
  bool same_state() const;

 private:
  struct Peer {
    std::optional<PeerProgress> first;
    std::optional<PeerProgress> last;
    bool fresh = false;  // reported since the last rendered line
    bool ended = false;
    std::string failure;
    std::optional<PeerSummary> summary;
  };
  std::string render();

  std::vector<Peer> peers_;
  std::optional<Clock::time_point> pending_since_;
};

}  // namespace loco::peer
