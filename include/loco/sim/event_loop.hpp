#pragma once
// The simulator's clock and calendar: a single-threaded discrete-event loop whose virtual time
// jumps to the next event. Events at the same time run in the order they were scheduled, so a
// run is a pure function of its inputs (and its seed): no wall clock, no threads, no unseeded
// randomness anywhere in sim/.
//
// Every event that changes the world feeds the trace hash (record()): two runs with the same
// seed end with the same hash, and a test checks it, so a failure found by a random schedule
// replays exactly.
//
// run_until() is bounded by an event budget: a livelock fails the test that caused it (it
// returns false) instead of hanging it.

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "loco/core/time.hpp"

namespace loco::sim {

class EventLoop {
 public:
  using Action = std::function<void()>;

  TimePoint now() const { return now_; }

  // Runs `action` at `at` (not before now()).
  void at(TimePoint at, Action action);
  void after(Duration delay, Action action) { at(now_ + delay, std::move(action)); }

  // Runs events until the next one is after `until` (then now() == until) or the budget of
  // events is spent (returns false: a livelock or a runaway schedule).
  bool run_until(TimePoint until, std::uint64_t max_events);

  // Mixes a fact about the run into the trace hash (an event's kind, its nodes, sizes).
  void record(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0);
  std::uint64_t trace_hash() const { return trace_; }
  std::uint64_t events_run() const { return events_run_; }

  // Called after every event (the invariant checks of a test).
  void set_after_each(Action check) { after_each_ = std::move(check); }

 private:
  struct Entry {
    TimePoint at;
    std::uint64_t seq;
    std::uint32_t slot;  // into actions_
    bool operator>(const Entry& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  TimePoint now_{};
  std::uint64_t seq_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue_;
  std::vector<Action> actions_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t trace_ = 0x6c6f636f2d73696dULL;  // "loco-sim"
  std::uint64_t events_run_ = 0;
  Action after_each_;
};

}  // namespace loco::sim
