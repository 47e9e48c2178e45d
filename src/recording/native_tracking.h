// The preload library's switch (python3 -m paddle_prof run --native): a forked child stops
// tracking native memory as it starts, so that it never counts its memory in its
// parent's report; a child that follows its parent's window profiles itself, and turns it
// back on. The library registers how; the core calls it without knowing the library.
#ifndef PADDLE_PROF_SRC_NATIVE_TRACKING_H_
#define PADDLE_PROF_SRC_NATIVE_TRACKING_H_

namespace paddle_prof::internal {

using NativeTrackingResumer = void (*)();
// Called by the preload library as it initialises.
void SetNativeTrackingResumer(NativeTrackingResumer resume);
// In a forked child with a profile of its own: tracks native memory again, as the parent
// did. Does nothing without the preload library.
void ResumeNativeTracking();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_NATIVE_TRACKING_H_
