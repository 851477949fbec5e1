// The data cache's cap (loco/fetch/cache_cap.hpp): least-recently-used files of any dataset go
// first, never one in use, and a file that cannot fit is refused before a byte is fetched.

#include "loco/fetch/cache_cap.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"

namespace loco::fetch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A file of `bytes` bytes last used `age` hours ago.
fs::path cached(const fs::path& path, std::size_t bytes, int age) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(age));
  return path;
}

TEST(CacheCap, EvictsTheLeastRecentlyUsedFilesOfAnyDatasetButNeverOneInUse) {
  test::TempDir dir;
  const fs::path oldest = cached(dir / "aaaa" / "train-00000.bin", 100, 5);  // another dataset
  const fs::path pinned = cached(dir / "bbbb" / "train-00000.bin", 100, 9);  // in use, oldest
  const fs::path middle = cached(dir / "bbbb" / "train-00001.bin", 100, 3);
  const fs::path recent = cached(dir / "bbbb" / "manifest.txt", 100, 1);

  // 400 held under a cap of 500: room for 100 without evicting; 250 more evicts two, oldest first.
  EXPECT_EQ(make_room(dir.path(), 500, 100, {pinned}), 400u);
  EXPECT_EQ(make_room(dir.path(), 500, 250, {pinned}), 200u);
  EXPECT_FALSE(fs::exists(oldest));
  EXPECT_FALSE(fs::exists(middle));
  EXPECT_TRUE(fs::exists(pinned));
  EXPECT_TRUE(fs::exists(recent));

  // A use renews a file: the manifest, used now, outlives a file used an hour ago.
  const fs::path used = cached(dir / "bbbb" / "val-00000.bin", 100, 1);
  touch(recent);
  EXPECT_EQ(make_room(dir.path(), 400, 150, {pinned}), 200u);
  EXPECT_FALSE(fs::exists(used));
  EXPECT_TRUE(fs::exists(recent));
}

TEST(CacheCap, AFileThatCannotFitBesideTheFilesInUseIsRefused) {
  test::TempDir dir;
  const fs::path a = cached(dir / "d" / "a.bin", 300, 2);
  const fs::path b = cached(dir / "d" / "b.bin", 300, 1);
  try {
    make_room(dir.path(), 1000, 500, {a, b});
    ADD_FAILURE() << "600 bytes in use and 500 more fit under 1000";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::resource);
    EXPECT_THAT(e.message(), HasSubstr("do not fit under its cap"));
  }
  EXPECT_TRUE(fs::exists(a));  // nothing evicted for a file that cannot fit anyway
  EXPECT_TRUE(fs::exists(b));
  // An empty or missing cache holds nothing.
  EXPECT_EQ(make_room(dir / "none", 10, 10, {}), 0u);
}

}  // namespace
}  // namespace loco::fetch
