// Streaming DiLoCo's balanced fragments, for any model: runs of whole tensors in order, each cut
// at the tensor boundary nearest its share of the floats, against a direct reference; names play
// no part (an LSTM's have no layer number).

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/train/fragments.hpp"

namespace loco::train {
namespace {

ArenaLayout layout_of(const std::vector<std::size_t>& sizes) {
  std::vector<TensorSpec> specs;
  for (std::size_t t = 0; t < sizes.size(); ++t)
    specs.push_back({"rnn.weight_hh_l" + std::to_string(t), {sizes[t]}});
  return ArenaLayout(std::move(specs));
}

// The first tensor of each fragment, by the rule of fragments.hpp written out directly.
std::vector<std::size_t> reference_starts(const std::vector<std::size_t>& sizes, std::size_t p) {
  std::vector<double> before = {0};
  for (std::size_t s : sizes) before.push_back(before.back() + static_cast<double>(s));
  std::vector<std::size_t> starts = {0};
  for (std::size_t k = 1; k < p; ++k) {
    const double target = before.back() * static_cast<double>(k) / static_cast<double>(p);
    std::size_t best = starts.back() + 1;
    for (std::size_t t = best; t <= sizes.size() - (p - k); ++t)
      if (std::abs(before[t] - target) < std::abs(before[best] - target)) best = t;
    starts.push_back(best);
  }
  return starts;
}

void expect_balanced(const std::vector<std::size_t>& sizes, std::size_t p) {
  const ArenaLayout layout = layout_of(sizes);
  const auto fragments = make_fragments(layout, p, FragmentLayout::balanced);
  ASSERT_EQ(fragments.size(), p);
  const auto starts = reference_starts(sizes, p);
  std::size_t next = 0;
  for (std::size_t k = 0; k < p; ++k) {
    ASSERT_EQ(fragments[k].ranges.size(), 1u) << "one run of tensors";
    const ArenaRange& r = fragments[k].ranges[0];
    EXPECT_EQ(r.first_tensor, next) << "in order, every tensor once";
    EXPECT_EQ(r.first_tensor, starts[k]) << "fragment " << k << " of " << p;
    EXPECT_LT(r.first_tensor, r.end_tensor) << "at least one tensor";
    EXPECT_EQ(fragments[k].floats, r.size);
    next = r.end_tensor;
  }
  EXPECT_EQ(next, sizes.size());
}

TEST(BalancedFragments, WholeTensorsInOrderCutNearestTheirShare) {
  const std::vector<std::size_t> lstm = {512, 256, 32, 32, 512, 256, 32, 32, 80, 5};
  for (std::size_t p = 1; p <= lstm.size(); ++p) expect_balanced(lstm, p);
  const std::vector<std::size_t> uneven = {1, 1, 1, 1000, 1, 1, 1, 1, 1000, 3};
  for (std::size_t p = 1; p <= uneven.size(); ++p) expect_balanced(uneven, p);
}

TEST(BalancedFragments, SplitsByFloatsNotByCount) {
  // Two halves of 103 floats: the cut is after the 4th tensor, not the 5th.
  const ArenaLayout layout = layout_of({100, 1, 1, 1, 100, 1, 1, 1});
  const auto two = make_fragments(layout, 2, FragmentLayout::balanced);
  EXPECT_EQ(two[0].ranges[0].end_tensor, 4u);
  // One huge tensor: each other fragment still gets one tensor.
  const auto three = make_fragments(layout_of({1000, 1, 1}), 3, FragmentLayout::balanced);
  EXPECT_EQ(three[0].ranges[0].end_tensor, 1u);
  EXPECT_EQ(three[1].ranges[0].end_tensor, 2u);
}

TEST(BalancedFragments, AtMostOneFragmentATensor) {
  const ArenaLayout layout = layout_of({4, 4, 4});
  EXPECT_THROW(make_fragments(layout, 4, FragmentLayout::balanced), Error);
  EXPECT_THROW(make_fragments(layout, 0, FragmentLayout::balanced), Error);
  EXPECT_EQ(parse_fragment_layout("balanced"), FragmentLayout::balanced);
  // The layer rule sees one layer here (no name has a layer number): one fragment only.
  EXPECT_THROW(make_fragments(layout, 2, FragmentLayout::sequential), Error);
}

}  // namespace
}  // namespace loco::train
