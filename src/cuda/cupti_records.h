// Reading CUPTI activity records: kernels, copies and memsets become GpuActivity
// entries, external-correlation records tie GPU API calls to the scope that made them.
// Times stay in CUPTI's nanoseconds here; the tracer maps them onto ticks.
#ifndef PADDLE_PROF_SRC_CUDA_CUPTI_RECORDS_H_
#define PADDLE_PROF_SRC_CUDA_CUPTI_RECORDS_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "gpu_activity.h"
#include "name_interner.h"

namespace paddle_prof::internal {

// The external-correlation kind our scope ids are pushed under. PyTorch's Kineto pushes
// CUSTOM0 (ops) and CUSTOM1 (user annotations): a kind of our own keeps the two stacks
// apart when both profilers run in one process.
constexpr CUpti_ExternalCorrelationKind kScopeCorrelationKind =
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;

class CuptiRecordReader {
 public:
  explicit CuptiRecordReader(GpuCapture* capture) : capture_(capture) {}

  // Kinds other than kernels, memcpy, memset and external correlation are skipped.
  void Read(const CUpti_Activity& record);
  // Every record in a buffer CUPTI handed back.
  void ReadBuffer(uint8_t* buffer, size_t valid_size);
  // The capture was just taken: the kernel names of the one taken before can go (the
  // collector reads a capture before the next is taken: see CuptiTracer::TakeCapture).
  void NextCapture();

 private:
  const char* Name(const char* name);

  GpuCapture* capture_;
  // Kernel names outlive CUPTI's strings, as event names do: those of the capture being
  // read, and those of the one taken last.
  NameCache names_[2];
  int current_ = 0;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CUDA_CUPTI_RECORDS_H_
