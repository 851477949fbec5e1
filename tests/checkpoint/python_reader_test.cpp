// A checkpoint written by loco, read by an independent reader: Python's json module for the
// header and numpy.frombuffer for the data, as the safetensors specification describes.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "loco/checkpoint/safetensors.hpp"

namespace loco::checkpoint {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

// Checks every tensor against the closed form the C++ side wrote, value for value, and the
// metadata; prints "ok" or what differs.
constexpr const char* kReader = R"(
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
data = raw[8 + n:]
meta = header.pop("__metadata__")
problems = []
if meta.get("step") != "7" or meta.get("note") != "caf\u00e9 \"q\"":
    problems.append("metadata %r" % meta)
expected_shapes = {"w": [3, 5], "b": [5], "s": []}
for name, shape in expected_shapes.items():
    entry = header[name]
    begin, end = entry["data_offsets"]
    values = np.frombuffer(data[begin:end], dtype="<f4").reshape(entry["shape"])
    if entry["dtype"] != "F32" or entry["shape"] != shape:
        problems.append("%s: %r" % (name, entry))
    count = int(np.prod(shape))
    want = ((np.arange(count, dtype=np.float32) * np.float32(0.75)) - np.float32(2)).reshape(shape)
    if name == "s":
        want = np.array(1e-30, dtype=np.float32).reshape(shape)
    if not np.array_equal(values, want):
        problems.append("%s values %r" % (name, values))
print("ok" if not problems else "; ".join(problems))
)";

std::vector<float> closed_form(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.75f - 2.0f;
  return v;
}

bool python_has_numpy() {
  const std::string probe = std::string(kPython) + " -c 'import numpy' >/dev/null 2>&1";
  return std::system(probe.c_str()) == 0;
}

TEST(SafetensorsPython, NumpyReadsWhatLocoWrote) {
  if (!std::filesystem::exists(kPython) || !python_has_numpy()) {
    GTEST_SKIP() << kPython << " with numpy is not installed (apt-get install python3-numpy)";
  }
  test::TempDir dir;
  const auto w = closed_form(15);
  const auto b = closed_form(5);
  const std::vector<float> s = {1e-30f};
  const std::vector<TensorRef> tensors = {{"w", {3, 5}, w}, {"b", {5}, b}, {"s", {}, s}};
  write_safetensors(dir / "ck.safetensors", tensors,
                    {{"step", "7"}, {"note", "caf\xc3\xa9 \"q\""}});
  std::ofstream(dir / "reader.py") << kReader;

  const std::string command = std::string(kPython) + " " + (dir / "reader.py").string() + " " +
                              (dir / "ck.safetensors").string() + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = ::pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_EQ(output, "ok\n");
}

}  // namespace
}  // namespace loco::checkpoint
