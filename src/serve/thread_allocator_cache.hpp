#pragma once

namespace kforge::serve {

// Returns the calling thread's cached free blocks to the shared allocator. The service runs up to 64
// handler threads; jemalloc keeps a cache per thread, so without this every thread that ever handled
// a request would hold its own megabyte of freed memory. The handler pool calls it when a thread has
// been idle a while (serve/handler_pool). A no-op when the binary uses glibc's malloc (the sanitizer
// builds).
void release_thread_allocator_cache() noexcept;

// Gives the allocator's free pages of every arena back to the system at once (jemalloc otherwise
// returns them only as later allocations let its decay run, so an idle service would keep its peak).
// Called when no request is in flight. A no-op without jemalloc.
void return_free_memory_to_system() noexcept;

}  // namespace kforge::serve
