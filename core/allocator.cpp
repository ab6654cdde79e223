#include "core/allocator.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace recycle {

void keep_freed_memory() noexcept {
#if defined(__GLIBC__)
  // Blocks up to 32 MiB (glibc's ceiling for this setting) come from the heap, not from mmap, and
  // the heap's top is trimmed only beyond 1 GiB free.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

}  // namespace recycle
