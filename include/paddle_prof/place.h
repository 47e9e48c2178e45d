// paddle_prof: Place, where memory lives: "CPU", "CUDA:0", "CUDA_PINNED" (page-locked
// host memory a framework keeps for copies to and from its GPUs), or "native"
// (malloc-family memory outside any TrackingAllocator).
//
//   paddle_prof::Place p = paddle_prof::CUDAPlace(0);
//   std::cout << paddle_prof::PlaceName(p);   // "CUDA:0"
#ifndef PADDLE_PROF_PLACE_H_
#define PADDLE_PROF_PLACE_H_

#include <string>

namespace paddle_prof {

struct Place {
  enum class Type { kCPU, kCUDA, kNative, kCUDAPinned } type;
  int device;
  bool operator==(const Place& o) const { return type == o.type && device == o.device; }
};

inline Place CPUPlace() { return {Place::Type::kCPU, 0}; }
inline Place CUDAPlace(int device) { return {Place::Type::kCUDA, device}; }
inline Place NativePlace() { return {Place::Type::kNative, 0}; }
inline Place CUDAPinnedPlace() { return {Place::Type::kCUDAPinned, 0}; }

// "CPU", "CUDA:<n>", "CUDA_PINNED" or "native": the name the report and the JSON use.
std::string PlaceName(const Place& place);

}  // namespace paddle_prof

#endif  // PADDLE_PROF_PLACE_H_
