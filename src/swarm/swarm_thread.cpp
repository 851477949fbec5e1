#include "loco/swarm/swarm_thread.hpp"

#include <omp.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <future>

namespace loco::swarm {

SwarmThread::SwarmThread(SwarmConfig config, const secure::KeyPair& identity)
    : session_(io_, std::move(config), identity, mailbox_, traffic_, guard_),
      grace_(io_),
      shard_link_(std::make_shared<ShardLink>(io_, session_)) {
  work_ =
      std::make_unique<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>(
          io_.get_executor());
  thread_ = std::thread([this, threads = session_.threads()] {
    // OpenMP's default team size is per thread: the compute thread's setting does not reach here.
    if (threads > 0) omp_set_num_threads(threads);
    try {
      io_.run();
    } catch (const std::exception& e) {
      // A bug, not a peer's doing (those end in loco::Error inside the session): stop loudly.
      spdlog::critical("network thread: {}", e.what());
      std::abort();
    }
  });
}

SwarmThread::~SwarmThread() {
  shard_link_->detach();
  leave("stopping");
  thread_.join();
}

void SwarmThread::start(const Digest& genesis, std::uint64_t round, const Digest& hash) {
  boost::asio::post(io_, [this, genesis, round, hash] { session_.start(genesis, round, hash); });
}

void SwarmThread::post(Command command) {
  boost::asio::post(io_, [this, command = std::move(command)] { session_.run(command); });
}

void SwarmThread::leave(const std::string& reason) {
  if (left_) return;
  left_ = true;
  std::promise<void> session_left;
  std::future<void> left_here = session_left.get_future();
  boost::asio::post(io_, [this, reason, &session_left] {
    session_.leave(reason);
    session_left.set_value();
    // The leave message and the close frames go out; peers that do not answer are not waited for.
    grace_.expires_after(std::chrono::seconds(2));
    grace_.async_wait([this](const boost::system::error_code&) { io_.stop(); });
  });
  work_.reset();
  // Until the session has left, the network thread may read the tentative state of an
  // asynchronous round (a commit that arrives meanwhile is served from it), which the caller frees
  // when it returns. The io thread runs until the grace above ends, so this wait ends.
  left_here.wait();
}

}  // namespace loco::swarm
