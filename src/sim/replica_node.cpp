#include "loco/sim/replica_node.hpp"

#include "loco/core/error.hpp"

namespace loco::sim {
namespace {

constexpr std::uint64_t kReplicaTrace = 0x7265706c696361;  // "replica"

}  // namespace

ReplicaNode::ReplicaNode(EventLoop& loop, Network& network, NodeId node,
                         proto::TrackerCoreConfig config, const secure::KeyPair& identity,
                         const Directory& directory, StoreModel& store, std::size_t index,
                         replica::CandidateConfig candidate)
    : loop_(loop),
      index_(index),
      config_(std::move(candidate)),
      client_(store.client(index)),
      tracker_(loop, network, node, std::move(config), identity, directory) {
  tracker_.set_keeping(StateKeeping{
      .load = [this] { return fenced_->load(); },
      .save =
          [this](const proto::TrackerSnapshot& state) {
            return fenced_->save(state) == replica::FencedState::Saved::saved;
          },
      .on_deposed =
          [this] {
            ++saves_refused_;
            loop_.record(kReplicaTrace, index_, 2);
          },
  });
}

void ReplicaNode::start() {
  candidate_ = std::make_unique<replica::Candidate>(*client_, config_);
  ++process_;
  look();
}

void ReplicaNode::crash() {
  if (tracker_.up()) tracker_.crash(true);
  candidate_.reset();
  fenced_.reset();
  ++process_;  // its pending look finds it gone
  paused_until_ = {};
  tracker_.pause_until({});
}

void ReplicaNode::pause(Duration span) {
  paused_until_ = loop_.now() + span;
  tracker_.pause_until(paused_until_);
}

void ReplicaNode::look() {
  const auto again = [this](TimePoint at) {
    loop_.at(at, [this, process = process_] {
      if (process == process_) look();
    });
  };
  // Stopped: the look runs once the process resumes, after what queued meanwhile.
  if (paused()) return again(paused_until_ + std::chrono::milliseconds(1));
  const TimePoint now = loop_.now();
  if (!tracker_.up()) {
    try {
      if (candidate_->follow(now) == replica::Election::Standing::leading) lead();
    } catch (const Error&) {
      // The store did not answer: look again at the next period.
    }
  } else {
    using Look = replica::Candidate::Look;
    const Look found = candidate_->lead(now);
    if (found != Look::leading && found != Look::unanswered) {
      ++deposed_by_look_;
      step_down();
    }
  }
  again(now + replica::Candidate::kPollPeriod);
}

void ReplicaNode::lead() {
  fenced_ =
      std::make_unique<replica::FencedState>(*client_, candidate_->election(), config_.prefix);
  try {
    tracker_.start();  // loads the run's state from the store, and saves it back, fenced
  } catch (const Error&) {
    return;  // not loaded: nothing was served; leads again once the store answers
  }
  if (!tracker_.up()) return;  // its first save was refused
  ++terms_;
  loop_.record(kReplicaTrace, index_, static_cast<std::uint64_t>(candidate_->term()));
}

void ReplicaNode::step_down() {
  tracker_.crash(true);  // as a deposed loco-tracker closes its connections and listener
  loop_.record(kReplicaTrace, index_, 1);
}

}  // namespace loco::sim
