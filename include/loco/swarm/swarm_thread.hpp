#pragma once
// loco-peer's network side (network_side.hpp): a thread running an io_context and the peer's
// SwarmSession on it. Commands are posted to the io_context; the session's events come back
// through a Mailbox the compute thread waits on.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <thread>

#include "loco/round/network_side.hpp"
#include "loco/swarm/shard_link.hpp"
#include "loco/swarm/swarm_session.hpp"

namespace loco::swarm {

class SwarmThread final : public round::NetworkSide {
 public:
  // `identity` outlives this.
  SwarmThread(SwarmConfig config, const secure::KeyPair& identity);
  ~SwarmThread() override;

  void start(const Digest& genesis, std::uint64_t round, const Digest& hash) override;
  void post(Command command) override;
  std::optional<round::SwarmEvent> wait(Duration timeout) override {
    return mailbox_.wait(timeout);
  }
  std::optional<round::SwarmEvent> wait_run_ended(Duration timeout) override {
    return mailbox_.wait_run_ended(timeout);
  }
  bool holds(const std::function<bool(const round::SwarmEvent&)>& which) const override {
    return mailbox_.holds(which);
  }
  void leave(const std::string& reason) override;
  bool gossip() const override { return session_.gossip(); }
  round::SharedStateGuard& guard() override { return guard_; }
  // The dataset fetch's way to the mesh (shard_link.hpp), for any thread; detached when this
  // thread stops.
  std::shared_ptr<ShardLink> shard_link() const { return shard_link_; }
  const round::TrafficCounters& traffic() const override { return traffic_; }

 private:
  boost::asio::io_context io_;
  round::Mailbox mailbox_;
  round::TrafficCounters traffic_;
  round::SharedStateGuard guard_;
  SwarmSession session_;
  boost::asio::steady_timer grace_;
  std::shared_ptr<ShardLink> shard_link_;
  std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread thread_;
  bool left_ = false;
};

}  // namespace loco::swarm
