// CPU copies of large buffers split across a few worker threads: one core's
// memcpy cannot keep up with the copy engine when pageable memory is staged.
#pragma once

#include <cstddef>

namespace nvl::core {

// Copies n bytes; large copies run on several threads, small ones inline.
void parallelMemcpy(void* dst, const void* src, size_t n);

}  // namespace nvl::core
