#pragma once

namespace kforge::serve {

// Returns the calling thread's cached free blocks to the shared allocator. The service may run one
// handler thread per connection slot (512 by default); jemalloc keeps a cache per thread, so without
// this every thread that ever handled a request would hold its own megabyte of freed memory. The
// handler pool calls it when a thread has been idle a while (serve/handler_pool). A no-op when the
// binary uses glibc's malloc (the sanitizer builds).
void release_thread_allocator_cache() noexcept;

}  // namespace kforge::serve
