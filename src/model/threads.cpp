#include <omp.h>

#include <Eigen/Core>

#include "loco/core/error.hpp"
#include "loco/model/model.hpp"

namespace loco::model {

void set_compute_threads(int threads) {
  if (threads < 1 || threads > 1024) {
    throw Error(ErrorCategory::config,
                "compute threads must be in [1, 1024], got " + std::to_string(threads));
  }
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
}

int compute_threads() {
  return Eigen::nbThreads();
}

}  // namespace loco::model
