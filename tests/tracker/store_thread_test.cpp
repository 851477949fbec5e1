// The thread a leading replica's etcd calls run on (tracker/store_thread.hpp): in the order
// posted, on a thread that is not the poster's.

#include "tracker/store_thread.hpp"

#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <vector>

namespace loco::tracker {
namespace {

TEST(StoreThread, RunsItsJobsInTheOrderPostedOnAThreadOfItsOwn) {
  std::vector<int> ran;
  std::vector<std::thread::id> threads;
  std::promise<void> last;
  std::future<void> done = last.get_future();
  {
    StoreThread store;
    for (int i = 0; i < 5; ++i)
      store.post([&, i] {
        ran.push_back(i);
        threads.push_back(std::this_thread::get_id());
      });
    store.post([&] { last.set_value(); });
    done.wait();
  }
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
  ASSERT_EQ(threads.size(), 5u);
  for (const std::thread::id id : threads) {
    EXPECT_EQ(id, threads.front()) << "one thread for every job";
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

}  // namespace
}  // namespace loco::tracker
