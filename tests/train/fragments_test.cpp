// Streaming DiLoCo's fragments and schedule against plain references: the layers of the GPT's
// tensors, sequential and strided assignment covering every float once, the offsets t_p and the
// send/land steps of docs/DESIGN.md §1.2, and the τ < H/P constraint.

#include "loco/train/fragments.hpp"

#include <gtest/gtest.h>

#include <set>

#include "loco/core/error.hpp"
#include "loco/model/gpt.hpp"

namespace loco::train {
namespace {

ArenaLayout gpt_layout(std::size_t layers) {
  return ArenaLayout(model::gpt_tensor_specs(
      {.vocab = 16, .context = 8, .n_layer = layers, .n_head = 2, .d_model = 8}));
}

TEST(Fragments, LayersAreEmbeddingsBlocksAndFinalNorm) {
  const ArenaLayout layout = gpt_layout(2);
  std::vector<std::size_t> expected = {0, 0};  // wte, wpe
  expected.insert(expected.end(), 12, 1);      // transformer.h.0.*
  expected.insert(expected.end(), 12, 2);      // transformer.h.1.*
  expected.insert(expected.end(), {3, 3});     // ln_f
  EXPECT_EQ(tensor_layers(layout), expected);
}

// Owner of each float by a direct per-tensor rule; every fragment must hold exactly its floats.
void expect_assignment(const ArenaLayout& layout, std::size_t count, FragmentLayout how) {
  const auto layers = tensor_layers(layout);
  const std::size_t units = layers.back() + 1;
  const auto fragments = make_fragments(layout, count, how);
  ASSERT_EQ(fragments.size(), count);
  std::vector<int> owner(layout.size(), -1);
  for (std::size_t p = 0; p < count; ++p) {
    std::size_t floats = 0;
    for (const ArenaRange& r : fragments[p].ranges) {
      for (std::size_t i = r.offset; i < r.offset + r.size; ++i) {
        EXPECT_EQ(owner[i], -1) << "float " << i << " in two fragments";
        owner[i] = static_cast<int>(p);
      }
      floats += r.size;
    }
    EXPECT_EQ(floats, fragments[p].floats);
  }
  for (std::size_t t = 0; t < layout.tensor_count(); ++t) {
    const std::size_t want =
        how == FragmentLayout::sequential ? layers[t] * count / units : layers[t] % count;
    EXPECT_EQ(owner[layout.tensor(t).offset], static_cast<int>(want)) << layout.tensor(t).name;
  }
  for (int o : owner) EXPECT_GE(o, 0) << "every float belongs to a fragment";
}

TEST(Fragments, SequentialAndStridedCoverEveryFloatOnce) {
  const ArenaLayout layout = gpt_layout(4);  // 6 layers
  for (std::size_t p = 1; p <= 6; ++p) {
    expect_assignment(layout, p, FragmentLayout::sequential);
    expect_assignment(layout, p, FragmentLayout::strided);
  }
  // Sequential fragments are one range each; strided ones interleave.
  for (const Fragment& f : make_fragments(layout, 3, FragmentLayout::sequential))
    EXPECT_EQ(f.ranges.size(), 1u);
  EXPECT_EQ(make_fragments(layout, 3, FragmentLayout::strided)[0].ranges.size(), 2u);
  EXPECT_THROW(make_fragments(layout, 7, FragmentLayout::sequential), Error);
  EXPECT_THROW(make_fragments(layout, 0, FragmentLayout::strided), Error);
  EXPECT_THROW(parse_fragment_layout("random"), Error);
}

TEST(FragmentSchedule, OffsetsSendsAndLandingsMatchTheFormula) {
  for (const auto& [h, p_count, tau] :
       {std::tuple{10u, 3u, 3u}, {12u, 4u, 0u}, {7u, 1u, 6u}, {100u, 8u, 12u}, {5u, 5u, 0u}}) {
    const FragmentSchedule s(h, p_count, tau);
    std::set<std::uint64_t> sends_at, lands_at;
    for (std::size_t p = 0; p < p_count; ++p) {
      const std::uint64_t t_p = h * (p + 1) / p_count;  // ⌊H/P·(p+1)⌋
      EXPECT_EQ(s.offset(p), t_p);
      std::set<std::uint64_t> sends, lands;
      for (std::uint64_t k = 0; k < 5; ++k) {
        sends.insert(t_p + k * h);
        lands.insert(t_p + tau + k * h);
      }
      for (std::uint64_t step = 1; step <= 4 * h; ++step) {
        EXPECT_EQ(s.sends(p, step), sends.contains(step)) << p << " " << step;
        EXPECT_EQ(s.lands(p, step), lands.contains(step)) << p << " " << step;
      }
    }
    EXPECT_EQ(s.offset(p_count - 1), h) << "the last fragment goes at the end of the round";
    // One fragment in flight at a time: between its send and its landing no other is sent.
    for (std::uint64_t step = 1; step <= 4 * h; ++step) {
      std::size_t flying = 0;
      for (std::size_t p = 0; p < p_count; ++p)
        for (std::uint64_t sent = step >= tau ? step - tau + 1 : 1; sent <= step; ++sent)
          flying += tau > 0 && s.sends(p, sent) ? 1 : 0;
      EXPECT_LE(flying, 1u) << step;
      EXPECT_EQ(s.in_flight(step), flying == 1) << step;
    }
  }
}

TEST(FragmentSchedule, TauMustStayBelowHOverP) {
  EXPECT_NO_THROW(FragmentSchedule(10, 3, 3));  // 3 < 10/3
  EXPECT_THROW(FragmentSchedule(10, 3, 4), Error);
  EXPECT_THROW(FragmentSchedule(12, 4, 3), Error);  // 3 = 12/4: two fragments would overlap
  EXPECT_THROW(FragmentSchedule(4, 5, 0), Error);   // more fragments than steps
  EXPECT_THROW(FragmentSchedule(4, 0, 0), Error);
  try {
    FragmentSchedule(12, 4, 3);
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("strategy.tau"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace loco::train
