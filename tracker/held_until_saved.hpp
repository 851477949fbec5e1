#pragma once
// What the tracker must not send before the state it depends on is saved (docs/TRACKER.md,
// "Running replicas"). A replica saves its state in etcd off the event loop (store_thread.hpp)
// and the loop goes on reading peers meanwhile; every message the core produced after a state
// change waits here until a save that covers the change is confirmed, so nothing that depends on
// a state is announced before that state is written (fenced) in etcd.
//
// Versions: each changed() is a new version of the state, 1, 2, ...; a message sent while the
// newest version is unsaved waits with that version (it may depend on anything up to it). Saves
// are ordered, one at a time: a change while a save is under way becomes the next save, replacing
// an earlier next one (the newer state holds everything the older did, and what came since: it
// covers it). A confirmed save of version v releases, in the order they were sent, the messages
// that wait with a version up to v, then starts the next save. A failed save (refused: deposed;
// or unanswered) ends it all: the messages waiting and the next save are dropped, never sent,
// and from then on nothing is saved or released.
//
// Sans-I/O. The `start` callback begins a save; its outcome comes back through finished(),
// later (a thread's answer posted to the loop) or from within `start` itself (the state file,
// written on the spot: then nothing ever waits). Released messages go to the `release` callback,
// in order, also from within finished().
//
// Call order: changed(), send(), drop() in any order on one thread; finished(v) once for each
// save started, with the version `start` was given, on that same thread.

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>

#include "loco/proto/tracker_core.hpp"
#include "loco/proto/tracker_snapshot.hpp"

namespace loco::tracker {

class HeldUntilSaved {
 public:
  using Version = std::uint64_t;
  using Start = std::function<void(Version version, proto::TrackerSnapshot state)>;
  using Release = std::function<void(proto::Transmit transmit)>;

  HeldUntilSaved(Start start, Release release);

  // A new version of the state: saved now if no save is under way, else next.
  void changed(proto::TrackerSnapshot state);
  // Released at once when every version is saved; else waits with the newest. Dropped once a
  // save failed.
  void send(proto::Transmit transmit);
  // The outcome of the save of `version` (the one under way).
  void finished(Version version, bool saved);

  // A peer cut off: drops what waits for it but its replies (as SendQueue::drop does).
  void drop(const proto::PeerKey& key);
  bool holds(const proto::PeerKey& key) const;
  std::size_t waiting() const { return held_.size(); }
  bool failed() const { return failed_; }
  Version saved_version() const { return saved_; }
  Version newest_version() const { return changed_; }

 private:
  void begin(Version version, proto::TrackerSnapshot state);
  void check_invariant() const;

  Start start_;
  Release release_;
  Version changed_ = 0;    // the newest version
  Version saved_ = 0;      // the newest version confirmed saved
  Version under_way_ = 0;  // the save started and not finished; 0: none
  std::optional<std::pair<Version, proto::TrackerSnapshot>> next_;
  std::deque<std::pair<Version, proto::Transmit>> held_;  // versions never decrease
  bool failed_ = false;
};

}  // namespace loco::tracker
