#include "loco/checkpoint/arena_tensors.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"

namespace loco::checkpoint {
namespace {

std::shared_ptr<const ArenaLayout> layout(std::size_t width) {
  return std::make_shared<const ArenaLayout>(
      std::vector<TensorSpec>{{"wte", {5, width}}, {"ln.weight", {width}}});
}

void fill_pattern(Arena& arena, float offset) {
  for (std::size_t t = 0; t < arena.layout().tensor_count(); ++t) {
    auto values = arena.tensor(t);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = offset + static_cast<float>(i);
  }
}

TEST(ArenaTensors, ParametersAndMomentsRoundTripThroughOneFile) {
  test::TempDir dir;
  Arena params(layout(3));
  Arena moments(layout(3));
  fill_pattern(params, 0.5f);
  fill_pattern(moments, -100.0f);
  std::vector<TensorRef> tensors;
  append_arena(tensors, params, "param.");
  append_arena(tensors, moments, "adam_m.");
  ASSERT_EQ(tensors.size(), 4u);
  EXPECT_EQ(tensors[2].name, "adam_m.wte");
  EXPECT_EQ(tensors[0].shape, (std::vector<std::int64_t>{5, 3}));
  write_safetensors(dir / "ck.safetensors", tensors, {{"step", "1"}});

  const SafetensorsFile file = SafetensorsFile::read(dir / "ck.safetensors");
  Arena params_back(layout(3));
  Arena moments_back(layout(3));
  load_arena(file, params_back, "param.");
  load_arena(file, moments_back, "adam_m.");
  EXPECT_TRUE(std::equal(params.data().begin(), params.data().end(), params_back.data().begin()));
  EXPECT_TRUE(
      std::equal(moments.data().begin(), moments.data().end(), moments_back.data().begin()));
}

TEST(ArenaTensors, LoadRefusesAnotherShapeOrAMissingTensor) {
  test::TempDir dir;
  Arena params(layout(3));
  std::vector<TensorRef> tensors;
  append_arena(tensors, params, "param.");
  write_safetensors(dir / "ck.safetensors", tensors, {});
  const SafetensorsFile file = SafetensorsFile::read(dir / "ck.safetensors");

  Arena wider(layout(4));
  EXPECT_THROW(load_arena(file, wider, "param."), Error);
  Arena same(layout(3));
  EXPECT_THROW(load_arena(file, same, "adam_v."), Error);
}

}  // namespace
}  // namespace loco::checkpoint
