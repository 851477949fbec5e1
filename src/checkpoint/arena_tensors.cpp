#include "loco/checkpoint/arena_tensors.hpp"

#include <algorithm>
#include <string>

#include "loco/core/error.hpp"

namespace loco::checkpoint {

void append_arena(std::vector<TensorRef>& out, const Arena& arena, std::string_view prefix) {
  const auto& tensors = arena.layout().tensors();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    std::vector<std::int64_t> shape(tensors[i].shape.begin(), tensors[i].shape.end());
    out.push_back({std::string(prefix) + tensors[i].name, std::move(shape), arena.tensor(i)});
  }
}

void load_arena(const SafetensorsFile& file, Arena& arena, std::string_view prefix) {
  const auto& tensors = arena.layout().tensors();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::string name = std::string(prefix) + tensors[i].name;
    const SafetensorsFile::Tensor& stored = file.tensor(name);
    const std::vector<std::int64_t> expected(tensors[i].shape.begin(), tensors[i].shape.end());
    if (stored.shape != expected) {
      throw Error(ErrorCategory::format, "checkpoint '" + file.name() + "' tensor '" + name +
                                             "' has another shape than the model's; was it "
                                             "written for another config?");
    }
    std::copy(stored.data.begin(), stored.data.end(), arena.tensor(i).begin());
  }
}

}  // namespace loco::checkpoint
