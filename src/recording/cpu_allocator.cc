#include <cstdint>
#include <cstdlib>

#include "paddle_prof/allocator.h"

namespace paddle_prof {

namespace {

class CPUBlockAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    constexpr size_t kAlignment = 64;
    // No object can be larger than PTRDIFF_MAX (glibc refuses those too); checked before
    // rounding up, which would wrap a size near SIZE_MAX to a small block.
    if (bytes > static_cast<size_t>(PTRDIFF_MAX)) return nullptr;
    // aligned_alloc wants a multiple of the alignment; a 0-byte request still gets a
    // block of its own, as malloc(0) does.
    const size_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) & ~(kAlignment - 1);
    return std::aligned_alloc(kAlignment, rounded);
  }
  void Free(void* ptr) override { std::free(ptr); }
};

}  // namespace

std::shared_ptr<Allocator> CPUAllocator() {
  static const auto allocator = std::make_shared<CPUBlockAllocator>();
  return allocator;
}

}  // namespace paddle_prof
