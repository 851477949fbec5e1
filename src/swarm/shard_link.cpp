#include "loco/swarm/shard_link.hpp"

#include <fmt/format.h>

#include <boost/asio/post.hpp>
#include <future>

#include "loco/swarm/swarm_session.hpp"

namespace loco::swarm {

ShardPeers ShardLink::peers(Duration timeout) {
  auto answer = std::make_shared<std::promise<ShardPeers>>();
  std::future<ShardPeers> future = answer->get_future();
  {
    const std::lock_guard lock(mutex_);
    if (session_ == nullptr) return {};
    boost::asio::post(*io_,
                      [session = session_, answer] { answer->set_value(session->shard_peers()); });
  }
  if (future.wait_for(timeout) != std::future_status::ready) return {};
  try {
    return future.get();
  } catch (const std::future_error&) {  // the thread stopped with the call queued
    return {};
  }
}

PieceOutcome ShardLink::fetch(const proto::PeerKey& peer, const proto::ShardRequest& request,
                              Duration timeout) {
  auto answer = std::make_shared<std::promise<PieceOutcome>>();
  std::future<PieceOutcome> future = answer->get_future();
  auto id = std::make_shared<std::uint64_t>(0);  // the network thread's, for cancel
  {
    const std::lock_guard lock(mutex_);
    if (session_ == nullptr) return {.bytes = {}, .error = "this peer's swarm has stopped"};
    boost::asio::post(*io_, [session = session_, answer, id, peer, request] {
      *id = session->ask_piece(
          peer, request, [answer](PieceOutcome outcome) { answer->set_value(std::move(outcome)); });
    });
  }
  if (future.wait_for(timeout) == std::future_status::ready) {
    try {
      return future.get();
    } catch (const std::future_error&) {
      return {.bytes = {}, .error = "this peer's swarm has stopped"};
    }
  }
  const std::lock_guard lock(mutex_);
  if (session_ != nullptr)
    boost::asio::post(*io_, [session = session_, id] { session->cancel_piece(*id); });
  return {.bytes = {},
          .error = fmt::format("no answer within {:.0f} s",
                               std::chrono::duration<double>(timeout).count())};
}

void ShardLink::detach() {
  const std::lock_guard lock(mutex_);
  io_ = nullptr;
  session_ = nullptr;
}

}  // namespace loco::swarm
