#include "loco/sim/strategy_process.hpp"

#include <memory>
#include <optional>
#include <utility>

#include "loco/core/error.hpp"
#include "loco/model/model.hpp"
#include "loco/round/peer_session.hpp"
#include "loco/sim/lying_gather.hpp"
#include "loco/sim/peer_node.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/make_sparseloco.hpp"
#include "loco/train/run_settings.hpp"
#include "loco/train/step_loop.hpp"
#include "loco/train/strategy_kinds.hpp"
#include "loco/train/swarm_strategy.hpp"

namespace loco::sim {
namespace {

train::TrainConfig checked(train::TrainConfig config) {
  train::check_swarm_strategy(config, "of the simulated run");
  return config;
}

// The join waits for the tracker however long the simulated run keeps it away (a crash of the
// tracker): the wait is in real time, which the simulator does not advance.
constexpr Duration kJoinPatience = std::chrono::hours(24 * 365);
// At the run's final round a peer waits this long for the tracker's word that it holds the final
// state (loco-peer's --peer.end-wait default), looking every kEndPoll of virtual time.
constexpr Duration kEndWait = std::chrono::seconds(120);
constexpr Duration kEndPoll = std::chrono::milliseconds(100);

}  // namespace

StrategyRun::StrategyRun(train::TrainConfig c)
    : config(checked(std::move(c))),
      corpus(config.data, static_cast<std::uint32_t>(config.model.gpt.vocab)),
      genesis(train::genesis_state(config).hash()),
      settings(train::run_settings(config)) {}

// --- Turns ---

void Turns::hand_over() {
  std::unique_lock lock(mutex_);
  computing_ = true;
  changed_.notify_all();
  changed_.wait(lock, [&] { return !computing_; });
}

void Turns::yield() {
  std::unique_lock lock(mutex_);
  computing_ = false;
  changed_.notify_all();
  changed_.wait(lock, [&] { return computing_; });
}

void Turns::wait_for_turn() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return computing_; });
}

void Turns::finish() {
  const std::lock_guard lock(mutex_);
  computing_ = false;
  changed_.notify_all();
}

// --- the network side, as the compute thread's SwarmGroup sees it ---

class StrategyProcess::Side final : public round::NetworkSide {
 public:
  explicit Side(StrategyProcess& process) : process_(process) {}

  void start(const Digest& genesis, std::uint64_t round, const Digest& hash) override {
    process_.schedule(
        [genesis, round, hash](PeerNode& node) { node.start_core(genesis, round, hash); });
  }
  void post(Command command) override {
    process_.schedule([command = std::move(command)](PeerNode& node) { node.run(command); });
  }
  std::optional<round::SwarmEvent> wait(Duration) override {
    if (process_.stopping_) return std::nullopt;
    process_.wait_for(Waiting::event);
    if (process_.stopping_) return std::nullopt;
    return process_.mailbox_.wait(Duration::zero());
  }
  // The simulated processes train their steps and leave: none waits for the run's end.
  std::optional<round::SwarmEvent> wait_run_ended(Duration) override {
    return process_.mailbox_.wait_run_ended(Duration::zero());
  }
  // What has arrived by this thread's clock: the event loop runs up to it first.
  bool holds(const std::function<bool(const round::SwarmEvent&)>& which) const override {
    if (!process_.stopping_) process_.wait_for(Waiting::clock);
    return process_.mailbox_.holds(which);
  }
  void leave(const std::string& reason) override {
    if (process_.stopping_) return;
    post([reason](round::ComputeLink& link, TimePoint) { link.leave(reason); });
    process_.wait_for(Waiting::clock);  // out of the run before the strategy's state is freed
  }
  bool gossip() const override { return process_.run_.config.strategy.gossip_group != 0; }
  round::SharedStateGuard& guard() override { return process_.guard_; }
  const round::TrafficCounters& traffic() const override { return traffic_; }

 private:
  StrategyProcess& process_;
  round::TrafficCounters traffic_;  // the simulated network counts its own
};

// --- the process ---

StrategyProcess::StrategyProcess(PeerNode& node, const StrategyRun& run, Duration step_time,
                                 Behaviour behaviour, std::uint64_t seed)
    : node_(node), run_(run), step_time_(step_time), behaviour_(behaviour), seed_(seed) {}

StrategyProcess::~StrategyProcess() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  while (!finished_) turns_.hand_over();  // its waits return at once: it unwinds
  thread_.join();
}

void StrategyProcess::start() {
  clock_ = node_.now();
  thread_ = std::thread([this] {
    turns_.wait_for_turn();
    try {
      train();
    } catch (...) {
      failure_ = std::current_exception();
    }
    finished_ = true;
    turns_.finish();
  });
  turn(node_.now());
}

void StrategyProcess::train() {
  const train::TrainConfig& config = run_.config;
  model::set_compute_threads(config.train.threads);
  train::InnerLoop loop(config, run_.corpus);
  round::PeerSetup setup{.config = config,
                         .loop = loop,
                         .side = std::make_unique<Side>(*this),
                         .stop = &stopping_,
                         .clock = [this] { return clock_; }};
  if (behaviour_ != Behaviour::honest &&
      train::strategy_row(config.strategy.kind).kind == train::StrategyKind::sparseloco)
    setup.gather = [&](round::SwarmGroup& group) {  // a liar's messages (lying_gather.hpp)
      return std::make_unique<LyingGather>(group, behaviour_, loop.layout(),
                                           train::sparseloco_config(config.strategy), seed_);
    };
  round::PeerSession session(std::move(setup));
  round::JoinOutcome joined;
  try {
    joined = session.join(/*resumed=*/false, kJoinPatience);
  } catch (const Error& e) {  // refused (the run is over and no one can hand over its state...)
    refusal_ = e.what();      // loco-peer exits with this message
    return;
  }
  if (joined.stopped) return;
  loop.set_shard(data::ShardSpec{joined.reply.shard_index, joined.reply.shard_count});
  session.start(joined);
  steps_ = loop.steps();  // a peer that fetched is at the run's step
  run_steps(session, loop);
  if (run_.evaluate) final_loss_ = loop.evaluate();
  update_buffers_ = session.group().update_buffers();
  last_round_ = session.group().last_round();
  if (session.at_end()) wait_for_the_run_end();
  session.leave();
}

// loco-peer's steps (round/peer_session.hpp), each a step time of the compute thread's virtual
// clock, before anything it sends; after each, the figures of the rounds it committed.
void StrategyProcess::run_steps(round::PeerSession& session, const train::InnerLoop& loop) {
  const round::SwarmGroup& group = session.group();
  std::uint64_t rounds_seen = 0;
  session.run({.before = [this] { clock_ += step_time_; },
               .done =
                   [&](const train::StepOutcome&) {
                     steps_ = loop.steps();
                     if (group.rounds_run() != std::exchange(rounds_seen, group.rounds_run()) &&
                         group.last_round().kind == train::RoundResult::Kind::committed) {
                       ++rounds_committed_;
                       shares_ += group.last_round().share;
                     }
                   }});
}

// As loco-peer at the run's final round (peer/swarm_peer.cpp): the last holders of the final state
// stay until the tracker says it keeps it (or keeps no copy), at most kEndWait.
void StrategyProcess::wait_for_the_run_end() {
  const TimePoint until = clock_ + kEndWait;
  while (!stopping_ && !mailbox_.wait_run_ended(Duration::zero()) && clock_ < until) {
    clock_ += kEndPoll;
    wait_for(Waiting::clock);
  }
}

void StrategyProcess::schedule(std::function<void(PeerNode&)> action) {
  scheduled_.emplace_back(clock_, std::move(action));
}

void StrategyProcess::wait_for(Waiting what) {
  waiting_ = what;
  turns_.yield();
}

void StrategyProcess::turn(TimePoint now) {
  clock_ = std::max(clock_, now);
  waiting_ = Waiting::nothing;
  listening_ = false;
  turns_.hand_over();
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  for (auto& [at, action] : scheduled_) node_.schedule_at(at, std::move(action));
  scheduled_.clear();
  if (waiting_ == Waiting::nothing) return;  // it ended
  // At its clock, after everything it scheduled: its turn again if it waits for that, or if it
  // waits for an event and one is there; else the next event hands it over (poke).
  node_.schedule_at(clock_, [this](PeerNode& node) {
    if (waiting_ == Waiting::clock || !mailbox_.empty())
      turn(node.now());
    else
      listening_ = true;
  });
}

void StrategyProcess::poke() {
  if (!listening_ || mailbox_.empty()) return;
  listening_ = false;
  node_.schedule_at(node_.now(), [this](PeerNode& node) { turn(node.now()); });
}

}  // namespace loco::sim
