#include "loco/secure/signature_memo.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace loco::secure {
namespace {

TEST(SignatureMemo, AnswersAsVerifyDoesAndChecksEachSignatureOnce) {
  const KeyPair tracker = KeyPair::generate();
  const std::vector<std::uint8_t> view = {1, 2, 3, 4};
  const Signature signature = tracker.sign(view);
  SignatureMemo memo;
  EXPECT_TRUE(memo.verify(tracker.public_key(), view, signature));
  EXPECT_EQ(memo.hits(), 0u);
  EXPECT_TRUE(memo.verify(tracker.public_key(), view, signature));
  EXPECT_EQ(memo.hits(), 1u);

  // Anything that differs from what verified is checked, and fails as verify() fails.
  std::vector<std::uint8_t> altered = view;
  altered[3] ^= 1;
  EXPECT_FALSE(memo.verify(tracker.public_key(), altered, signature));
  EXPECT_FALSE(memo.verify(tracker.public_key(), std::span(view).first(3), signature));
  Signature forged = signature;
  forged[0] ^= 1;
  EXPECT_FALSE(memo.verify(tracker.public_key(), view, forged));
  EXPECT_FALSE(memo.verify(KeyPair::generate().public_key(), view, signature));
  EXPECT_EQ(memo.hits(), 1u);
}

TEST(SignatureMemo, ForgetsTheOldestBeyondItsCapacity) {
  const KeyPair tracker = KeyPair::generate();
  SignatureMemo memo(2);
  std::vector<std::vector<std::uint8_t>> messages = {{1}, {2}, {3}};
  std::vector<Signature> signatures;
  for (const auto& m : messages) {
    signatures.push_back(tracker.sign(m));
    EXPECT_TRUE(memo.verify(tracker.public_key(), m, signatures.back()));
  }
  EXPECT_TRUE(memo.verify(tracker.public_key(), messages[2], signatures[2]));
  EXPECT_TRUE(memo.verify(tracker.public_key(), messages[1], signatures[1]));
  EXPECT_EQ(memo.hits(), 2u);
  EXPECT_TRUE(memo.verify(tracker.public_key(), messages[0], signatures[0]));  // verified again
  EXPECT_EQ(memo.hits(), 2u);
}

}  // namespace
}  // namespace loco::secure
