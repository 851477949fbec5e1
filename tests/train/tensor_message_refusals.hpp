#pragma once
// The malformed forms of a good message in tensor_messages.hpp's layout (version u8 | tensor
// count u32 | per tensor: u32 length | codec message), which DeMo's and SparseLoCo's decoders
// must each refuse with Error(format) saying what is wrong.

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "loco/core/error.hpp"

namespace loco::test {

// `decode(bytes)` decodes one message; `good` is a valid one of a 2-tensor layout whose first
// tensor holds `first_values` values; `name` begins every framing error, `codec_says` is in the
// codec's. Returns `good` with its first codec message's magic broken (a bad part for the
// aggregate checks).
template <class Decode>
std::vector<std::byte> expect_malformed_refused(Decode decode, const std::vector<std::byte>& good,
                                                std::size_t first_values, const std::string& name,
                                                const std::string& codec_says) {
  const auto refused = [&](const std::vector<std::byte>& bad, const std::string& says) {
    try {
      decode(bad);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::format);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused({}, name);
  std::vector<std::byte> bad = good;
  bad[0] = std::byte{9};
  refused(bad, "another version");
  bad = good;
  bad[1] = std::byte{3};
  refused(bad, "3 tensors where the model has 2");
  bad = good;
  bad[5] = bad[6] = bad[7] = bad[8] = std::byte{0xff};  // the first tensor's length
  refused(bad, "more than its " + std::to_string(first_values) + " values can");
  refused(std::vector<std::byte>(good.begin(), good.end() - 1), name);
  bad = good;
  bad.push_back(std::byte{0});
  refused(bad, name);
  bad = good;
  bad[9] = std::byte{0};  // the first codec message's magic
  refused(bad, codec_says);
  return bad;
}

}  // namespace loco::test
