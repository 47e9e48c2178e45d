// Which forward op each backward node came from, paired as Kineto pairs them for
// torch.profiler's traces: a backward node names its forward op's thread and sequence
// number; of the forward ops of that thread with that number, the one that began last
// before the node ended is its op (the ops that create no autograd node share the number
// of the next one that does). The trace draws each pair as an arrow.
#ifndef PADDLE_PROF_SRC_AUTOGRAD_LINKS_H_
#define PADDLE_PROF_SRC_AUTOGRAD_LINKS_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "collection.h"

namespace paddle_prof::internal {

struct AutogradLink {
  uint64_t id = 0;       // the pair's, from 1
  bool forward = false;  // the forward op's end, else the backward node's
};

// By CallKey(thread position, record index): the kept calls of `c` that are one end of
// a pair.
using AutogradLinks = std::unordered_map<uint64_t, AutogradLink>;
inline uint64_t CallKey(size_t position, size_t index) {
  return static_cast<uint64_t>(position) << 40 | static_cast<uint64_t>(index);
}
AutogradLinks LinkForwardToBackward(const Collection& c);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_AUTOGRAD_LINKS_H_
