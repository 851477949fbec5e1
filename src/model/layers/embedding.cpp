#include "loco/model/layers/embedding.hpp"

namespace loco::model {

void embedding_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe,
                       Index b, Index t, Index c) {
#pragma omp parallel for schedule(static) if (b * t * c >= kMinParallelWork)
  for (Index i = 0; i < b * t; ++i) {
    RowVecView row(out + i * c, c);
    row = ConstRowVecView(wte + static_cast<Index>(tokens[i]) * c, c);
    if (wpe != nullptr) row += ConstRowVecView(wpe + (i % t) * c, c);
  }
}

void embedding_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens,
                        Index b, Index t, Index c) {
  for (Index i = 0; i < b * t; ++i) {
    const ConstRowVecView dy(dout + i * c, c);
    RowVecView(dwte + static_cast<Index>(tokens[i]) * c, c) += dy;
    if (dwpe != nullptr) RowVecView(dwpe + (i % t) * c, c) += dy;
  }
}

}  // namespace loco::model
