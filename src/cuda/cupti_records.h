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

class CuptiRecordReader {
 public:
  explicit CuptiRecordReader(GpuCapture* capture) : capture_(capture) {}

  // Kinds other than kernels, memcpy, memset and external correlation are skipped.
  void Read(const CUpti_Activity& record);
  // Every record in a buffer CUPTI handed back.
  void ReadBuffer(uint8_t* buffer, size_t valid_size);

 private:
  const char* Name(const char* name);

  GpuCapture* capture_;
  NameCache names_;  // kernel names outlive CUPTI's strings, as event names do
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CUDA_CUPTI_RECORDS_H_
