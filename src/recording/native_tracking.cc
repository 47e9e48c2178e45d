#include "native_tracking.h"

#include <atomic>

namespace paddle_prof::internal {

namespace {
std::atomic<NativeTrackingResumer> g_resume{nullptr};
}  // namespace

void SetNativeTrackingResumer(NativeTrackingResumer resume) { g_resume.store(resume); }

void ResumeNativeTracking() {
  if (const NativeTrackingResumer resume = g_resume.load()) resume();
}

}  // namespace paddle_prof::internal
