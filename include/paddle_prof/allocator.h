// paddle_prof: memory tracking. A framework allocates through a TrackingAllocator (or
// reports its own allocator's blocks with RecordAlloc/RecordFree), and every report
// then gives, per operator and place, the memory the operator needed at its worst
// moment (peak), what it allocated and freed, and what it left alive.
//
//   auto cpu = std::make_shared<paddle_prof::TrackingAllocator>(paddle_prof::CPUAllocator(),
//                                                               paddle_prof::CPUPlace());
//   {
//     PADDLE_PROF_RECORD_EVENT("fill_constant");
//     void* out = cpu->Allocate(1000 * 784 * sizeof(float));   // peak 3,136,000
//   }
//
// Tracking is always on, profiling or not, so a block allocated before profiling began
// and freed inside it is sized and charged to the operator that frees it. Sizes are the
// sizes requested. Recording takes no lock and makes no heap allocation.
#ifndef PADDLE_PROF_ALLOCATOR_H_
#define PADDLE_PROF_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "paddle_prof/place.h"

namespace paddle_prof {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // A block of at least `bytes`; nullptr or std::bad_alloc when it cannot be served.
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
};

// Wraps any Allocator and records every block it hands out and takes back on `place`.
class TrackingAllocator final : public Allocator {
 public:
  TrackingAllocator(std::shared_ptr<Allocator> base, Place place);
  // nullptr when the base returns nullptr; std::bad_alloc when the block cannot be
  // tracked (a size above 2^56 bytes, no memory for the live-block table). A base that
  // fails (nullptr, or an exception, which goes on to the caller) while profiling is on
  // writes the window's out-of-memory dump first.
  void* Allocate(size_t bytes) override;
  // nullptr is ignored. A pointer this allocator did not hand out, or already took back,
  // is counted in the place's untracked_frees and never reaches the base allocator; a
  // block another allocator made (RecordAlloc, a TrackingAllocator over another base)
  // stays live too.
  void Free(void* ptr) override;

 private:
  std::shared_ptr<Allocator> base_;
  Place place_;
  int place_index_;
  uint8_t source_;  // its base's id, which the blocks it makes carry
};

// Plain host memory in 64-byte aligned blocks (aligned_alloc / free).
std::shared_ptr<Allocator> CPUAllocator();

// Device memory from cudaMalloc/cudaFree on `device`; wrap it with CUDAPlace(device):
//   TrackingAllocator gpu(CUDAAllocator(0), CUDAPlace(0));
// Throws std::runtime_error when there is no such device, or when paddle_prof was
// built without CUDA.
std::shared_ptr<Allocator> CUDAAllocator(int device);

// For frameworks that keep their own allocator: report the same facts directly.
// RecordFree of a pointer never recorded is counted in the place's untracked_frees.
// RecordAlloc of a pointer that the calling thread recorded and is still live frees the
// old block first (its allocator reused the address without a RecordFree), counted in a
// report warning; a size above 2^56 bytes (64 PiB) is ignored, also counted.
void RecordAlloc(Place place, const void* ptr, size_t bytes);
void RecordFree(Place place, const void* ptr);

}  // namespace paddle_prof

#endif  // PADDLE_PROF_ALLOCATOR_H_
