#include "loco/core/sodium_init.hpp"

#include <sodium.h>

#include "loco/core/assert.hpp"

namespace loco {

void ensure_sodium_initialized() {
  static const int result = sodium_init();
  LOCO_ASSERT(result >= 0, "libsodium failed to initialise");
}

}  // namespace loco
