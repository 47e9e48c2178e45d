// Memory that an allocator reports only as two counters, the bytes in use and their
// high-water mark (PyTorch's CUDA allocator statistics where it has no per-block hook),
// turned into blocks the tracker charges like any other. The counters are read at op
// boundaries, and what they moved since the previous read is charged to the scope open
// on the reading thread:
//  - growth becomes a block that scope allocated;
//  - a high-water mark that rose between the reads becomes a block allocated and freed
//    there, so a temporary that an op frees before returning still shows as its peak;
//  - shrinkage frees the newest blocks first (an op's outputs and temporaries go before
//    what older ops left, as backward frees activations in reverse), shrinking the last
//    one in place.
// So per-op net bytes are exact at op boundaries (for one thread at a time on the
// device), peaks are exact when they set a new high and a lower bound otherwise, and
// which op holds live bytes is inferred, not known.
#ifndef PADDLE_PROF_SRC_COUNTER_MEMORY_H_
#define PADDLE_PROF_SRC_COUNTER_MEMORY_H_

#include <cstdint>
#include <mutex>
#include <vector>

#include "paddle_prof/place.h"

namespace paddle_prof::internal {

class CounterMemory {
 public:
  explicit CounterMemory(Place place);
  CounterMemory(const CounterMemory&) = delete;
  CounterMemory& operator=(const CounterMemory&) = delete;

  // The counters as read now. The first read takes what is already in use as one block
  // from before; call it before the profiler starts so that nobody is charged for it.
  void Observe(int64_t in_use, int64_t peak);

  int64_t held_bytes() const;  // what the blocks add up to: the last `in_use` read

 private:
  void Grow(int64_t bytes);
  void Shrink(int64_t bytes);
  const void* Address(size_t depth) const;

  mutable std::mutex mu_;  // reads come from every thread that runs ops
  const int place_;
  const uintptr_t base_;  // the first block's address
  bool first_ = true;
  int64_t in_use_ = 0;
  int64_t peak_ = 0;
  std::vector<int64_t> held_;  // block sizes, oldest first; block i lives at Address(i)
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_COUNTER_MEMORY_H_
