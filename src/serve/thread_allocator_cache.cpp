#include "serve/thread_allocator_cache.hpp"

#include <cstddef>

// jemalloc's control interface; weak, so it is null when jemalloc is not linked in.
extern "C" int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp, std::size_t newlen)
    __attribute__((weak));

namespace kforge::serve {

void release_thread_allocator_cache() noexcept {
  if (mallctl != nullptr) {
    mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
  }
}

void return_free_memory_to_system() noexcept {
  if (mallctl != nullptr) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);  // 4096: MALLCTL_ARENAS_ALL, every arena
  }
}

}  // namespace kforge::serve
