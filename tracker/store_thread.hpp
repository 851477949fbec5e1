#pragma once
// The thread a leading replica's etcd calls run on (docs/TRACKER.md, "Running replicas"): its
// saves (etcd_state.hpp, held_until_saved.hpp) and its looks at the election (replica.hpp), one
// at a time in the order posted, so the event loop keeps serving peers while etcd answers, or
// does not. A job posts its outcome back to the loop itself (boost::asio::post), and catches what
// it can throw (an exception out of a job ends the process). One thread for all of them because
// they share one etcd client and one election, neither of which is safe to call from two threads,
// and because a save must not overtake the look before it.
//
// Destroying it drops the jobs not begun and waits for the one under way: an etcd call, at most
// the client's timeout on every member (about a lease when none answers).

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace loco::tracker {

class StoreThread {
 public:
  StoreThread();
  ~StoreThread();
  StoreThread(const StoreThread&) = delete;
  StoreThread& operator=(const StoreThread&) = delete;

  // Runs `job` on the thread after those posted before it. Any thread.
  void post(std::function<void()> job);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;  // under mutex_
  bool stopping_ = false;                   // under mutex_
  std::thread thread_;                      // last: started once the rest is
};

}  // namespace loco::tracker
