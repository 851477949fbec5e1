#pragma once
// The dataset fetch's way to the mesh (issue 46): from its own thread, the members of the view and
// a piece of a train shard asked of one of them, waited for with a deadline
// (shard_service.hpp runs the exchange on the network thread). Made by SwarmThread::shard_link();
// once the thread stops, every call fails at once, so a fetch that outlives the swarm (its
// thread is stopped after it) asks its other sources.

#include <boost/asio/io_context.hpp>
#include <memory>
#include <mutex>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/proto/tracker_messages.hpp"
#include "loco/swarm/shard_service.hpp"

namespace loco::swarm {

class SwarmSession;

class ShardLink {
 public:
  ShardLink(boost::asio::io_context& io, SwarmSession& session) : io_(&io), session_(&session) {}

  // The members of this peer's view, itself left out; none before the join, or when the thread
  // stopped.
  ShardPeers peers(Duration timeout);
  // `request` asked of member `peer`: its piece, or the error (a refusal, the link lost, no
  // answer within `timeout`, not a member, the swarm stopped).
  PieceOutcome fetch(const proto::PeerKey& peer, const proto::ShardRequest& request,
                     Duration timeout);
  // The swarm's thread stops: calls from now on fail.
  void detach();

 private:
  std::mutex mutex_;  // guards the two pointers (not held while a call waits)
  boost::asio::io_context* io_;
  SwarmSession* session_;
};

}  // namespace loco::swarm
