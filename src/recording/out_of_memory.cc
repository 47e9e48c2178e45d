#include "out_of_memory.h"

#include <atomic>

namespace paddle_prof::internal {

namespace {
std::atomic<OutOfMemoryHandler> g_handler{nullptr};
}  // namespace

void SetOutOfMemoryHandler(OutOfMemoryHandler handler) {
  g_handler.store(handler, std::memory_order_release);
}

void OnOutOfMemory(const Place& place, size_t requested_bytes) noexcept {
  if (OutOfMemoryHandler handler = g_handler.load(std::memory_order_acquire)) {
    try {
      handler(place, requested_bytes);
    } catch (...) {  // a dump that cannot be made must not replace the program's error
    }
  }
}

}  // namespace paddle_prof::internal
