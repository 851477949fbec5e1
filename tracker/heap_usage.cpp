#include "tracker/heap_usage.hpp"

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizers' runtimes export it (sanitizer/allocator_interface.h, which GCC does not ship):
// their allocator replaces malloc, whose mallinfo2 then counts nothing.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

namespace loco::tracker {

std::uint64_t heap_in_use_bytes() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();
#elif defined(__GLIBC__)
  const struct mallinfo2 info = ::mallinfo2();
  return info.uordblks + info.hblkhd;  // in use from the heap arenas, and in mmapped blocks
#else
  return 0;
#endif
}

}  // namespace loco::tracker
