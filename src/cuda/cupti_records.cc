#include "cupti_records.h"

namespace paddle_prof::internal {

namespace {

const char* MemcpyName(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "Memcpy PtoP";
    default:
      return "Memcpy";
  }
}

}  // namespace

const char* CuptiRecordReader::Name(const char* name) {
  return name != nullptr ? names_[current_].Intern(name) : "(unnamed kernel)";
}

void CuptiRecordReader::NextCapture() {
  current_ ^= 1;
  names_[current_].ReleaseAllBut(nullptr, 0);
}

void CuptiRecordReader::Read(const CUpti_Activity& record) {
  GpuActivity a;
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      a = {GpuActivity::Kind::kKernel,   Name(k.name), k.start,        k.end,
           static_cast<int>(k.deviceId), k.streamId,   k.correlationId};
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      a = {GpuActivity::Kind::kMemcpy,
           MemcpyName(m.copyKind),
           m.start,
           m.end,
           static_cast<int>(m.deviceId),
           m.streamId,
           m.correlationId};
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      a = {GpuActivity::Kind::kMemset,   "Memset",   m.start,        m.end,
           static_cast<int>(m.deviceId), m.streamId, m.correlationId};
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& e = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record);
      if (e.externalKind == kScopeCorrelationKind) {
        capture_->scope_of_call[e.correlationId] = e.externalId;
      }
      return;
    }
    default:
      return;  // API records only carry the external correlation along
  }
  capture_->activities.push_back(a);
}

void CuptiRecordReader::ReadBuffer(uint8_t* buffer, size_t valid_size) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) Read(*record);
}

}  // namespace paddle_prof::internal
