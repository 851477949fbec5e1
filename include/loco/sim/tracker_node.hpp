#pragma once
// The tracker as a simulated process: it drives proto::TrackerCore as loco-tracker's
// TrackerService does (tracker/tracker_service.cpp): one connection per peer key, a message over
// its type's size limit closes the connection, events drained before transmits, the snapshot
// saved on every state_changed event before the messages that follow go out, one timer at the
// core's poll_timeout().
//
// The saved snapshot is its disk: crash() loses the process and everything not saved; start()
// after a crash restores the core from the saved bytes (decode_snapshot(), the same path a
// restarted loco-tracker takes). The newest custody copy the core pulled is on that disk too, and
// handed to the restarted core (set_custody), as loco-tracker's custody folder is.
//
// A tracker replica (replica_node.hpp) keeps its state in the store instead (set_keeping): the
// node loads it at start() and saves each change through it; a save refused (deposed) stops the
// process at once, before anything of that change goes out, as TrackerService::depose does.
// pause_until() is a SIGSTOP and its SIGCONT: every input that comes meanwhile (messages, closes,
// its timers) waits, in its order, for the process to resume.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "loco/proto/tracker_core.hpp"
#include "loco/sim/directory.hpp"

namespace loco::sim {

// Where a replica's state is durable (replica_node.hpp): save() false is a deposed replica.
struct StateKeeping {
  std::function<std::optional<proto::TrackerSnapshot>()> load;
  std::function<bool(const proto::TrackerSnapshot&)> save;
  std::function<void()> on_deposed;
};

class TrackerNode final : public NodeHandler {
 public:
  using Observer = std::function<void(const proto::TrackerEvent&)>;

  // `identity` and `directory` outlive the node.
  TrackerNode(EventLoop& loop, Network& network, NodeId node, proto::TrackerCoreConfig config,
              const secure::KeyPair& identity, const Directory& directory);

  // Throws what the keeping's load() throws (the store unreachable): nothing started.
  void start();
  void set_keeping(StateKeeping keeping) { keeping_ = std::move(keeping); }
  void pause_until(TimePoint resume) { paused_until_ = resume; }
  // The process dies (notify: its connections reset; else the host vanishes).
  void crash(bool notify = true);
  bool up() const { return core_ != nullptr; }

  void set_observer(Observer observer) { observer_ = std::move(observer); }
  const proto::TrackerCore* core() const { return core_.get(); }
  // What the node learnt of the peers' spread; a restarted process learns it again.
  void set_spread(double rms) {
    if (core_) core_->set_spread(rms);
  }
  NodeId node() const { return node_; }
  // The core's inputs so far (messages, disconnects, timers), over every process.
  std::uint64_t inputs() const { return inputs_; }
  // The run's committed round and state as last saved (also while the process is down), and the
  // round and state of the newest custody copy on its disk (round 0: none).
  const std::pair<std::uint64_t, Digest>& committed() const { return committed_; }
  const std::pair<std::uint64_t, Digest>& custody_held() const { return custody_held_; }

  void on_open(NodeId peer) override;
  void on_message(NodeId from, std::uint16_t type, std::span<const std::byte> body) override;
  void on_close(NodeId peer, const std::string& why) override;

 private:
  void drive();
  bool save();  // the snapshot to the disk or the keeping; false: deposed (the process is gone)
  // While paused: `input` runs when the process resumes, if it is the same process then.
  bool deferred(std::function<void()> input);
  void keep_custody(proto::CustodyCopy copy);
  // The reachability probe the core asked for, answered from the simulated network.
  void answer_probe(const proto::Probe& probe);
  void arm_timer();

  EventLoop& loop_;
  Network& network_;
  NodeId node_;
  proto::TrackerCoreConfig config_;
  const secure::KeyPair& identity_;
  const Directory& directory_;
  std::unique_ptr<proto::TrackerCore> core_;
  std::optional<std::vector<std::byte>> disk_;                   // the saved snapshot
  std::pair<std::uint64_t, Digest> committed_{};                 // as saved in disk_
  std::shared_ptr<const std::vector<std::byte>> custody_bytes_;  // the newest custody copy
  std::optional<proto::StateManifest> custody_manifest_;
  std::pair<std::uint64_t, Digest> custody_held_{};
  std::map<NodeId, bool> connected_;  // peers with a current connection
  TimePoint timer_at_ = kNever;
  std::uint64_t process_ = 0;  // which process armed a timer
  std::uint64_t inputs_ = 0;
  Observer observer_;
  std::optional<StateKeeping> keeping_;
  TimePoint paused_until_{};
};

}  // namespace loco::sim
