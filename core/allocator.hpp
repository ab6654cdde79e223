// How the process's allocator treats freed memory.
#pragma once

namespace recycle {

/// Keeps freed memory in the process for the next allocation instead of handing it back to the
/// kernel at once. Planning and timing schedules allocate and free buffers of the same few sizes
/// thousands of times (a replay plans hundreds of failure sets); glibc's defaults serve each large
/// one from fresh pages and return them on free, so every plan pays its page faults again (about
/// a tenth of a 16,384-GPU replay). The peak stays what the largest plan needs. The command line
/// and the benchmarks call it once at start; elsewhere (and off glibc) it does nothing.
void keep_freed_memory() noexcept;

}  // namespace recycle
