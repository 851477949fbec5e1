#include "kernels.hpp"

#include <string>

namespace loco::compress::detail {

void check_shape(std::span<const std::size_t> shape, std::size_t count, const char* codec) {
  if (shape.empty()) return;
  std::size_t product = 1;
  for (std::size_t d : shape) product *= d;
  if (product != count) {
    throw Error(ErrorCategory::invalid_argument, std::string(codec) + " encode: the shape holds " +
                                                     std::to_string(product) + " values but " +
                                                     std::to_string(count) + " were given");
  }
}

}  // namespace loco::compress::detail
