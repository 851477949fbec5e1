#pragma once

namespace loco {

// Initialises libsodium once per process (thread-safe; later calls are free). Every module that
// calls libsodium calls this first. Aborts if the library cannot initialise (no entropy source).
void ensure_sodium_initialized();

}  // namespace loco
