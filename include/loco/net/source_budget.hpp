#pragma once
// The counts behind ListenerLimits (listener_limits.hpp): streams in each phase, in all and per
// source. Sans-I/O: the listener asks before each step (over_cap) and holds one StreamSlot per
// accepted stream, which moves through the phases and gives its place back exactly once: when
// released, or at the latest when destroyed. Invariant: every count equals the number of live
// slots it covers, and a source with no live slot has no entry (the table does not grow with
// every address ever seen).

#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loco/net/listener_limits.hpp"

namespace loco::net {

enum class StreamPhase : std::uint8_t { handshake, waiting, admitted };

// "10.0.0.5"; an IPv6 address as its /64, "2001:db8:1:2::/64"; an IPv4-mapped one as IPv4.
std::string source_of(const boost::asio::ip::address& address);

class SourceBudget {
 public:
  explicit SourceBudget(const ListenerLimits& limits);

  // Which cap `sources` (one entry per stream) entering `phase` would break: a short reason for
  // the log, or nothing when they fit.
  std::optional<std::string> over_cap(StreamPhase phase,
                                      const std::vector<std::string>& sources) const;
  std::size_t in_phase(StreamPhase phase) const { return totals_[index(phase)]; }
  std::size_t pending_from(const std::string& source) const;  // handshake or waiting
  std::size_t admitted_from(const std::string& source) const;
  std::size_t sources() const { return by_source_.size(); }
  const ListenerLimits& limits() const { return limits_; }

 private:
  friend class StreamSlot;
  struct Counts {
    std::size_t pending = 0;
    std::size_t admitted = 0;
  };
  static std::size_t index(StreamPhase phase) { return static_cast<std::size_t>(phase); }
  void enter(const std::string& source, StreamPhase phase);
  void leave(const std::string& source, StreamPhase phase);
  void check_invariant() const;

  ListenerLimits limits_;
  std::size_t totals_[3] = {0, 0, 0};
  std::map<std::string, Counts> by_source_;
};

// One accepted stream's place in a budget. Not copyable: share it through a shared_ptr.
class StreamSlot {
 public:
  // Enters the handshake phase; the caller has checked over_cap.
  StreamSlot(std::shared_ptr<SourceBudget> budget, std::string source);
  ~StreamSlot() { release(); }
  StreamSlot(const StreamSlot&) = delete;
  StreamSlot& operator=(const StreamSlot&) = delete;

  void move_to(StreamPhase phase);  // the caller has checked over_cap; no-op once released
  void release();                   // idempotent
  const std::string& source() const { return source_; }
  StreamPhase phase() const { return phase_; }

 private:
  std::shared_ptr<SourceBudget> budget_;
  std::string source_;
  StreamPhase phase_ = StreamPhase::handshake;
  bool released_ = false;
};

}  // namespace loco::net
