// Owns every ThreadRecorder for the life of the process, so a thread may exit before
// the report is built without losing its records. Registering takes a lock once per
// thread, never per event. A recorder whose thread exited is handed to the next new
// thread once its records belong to a finished window, which bounds memory when
// threads come and go.
#ifndef PADDLE_PROF_SRC_RECORDER_REGISTRY_H_
#define PADDLE_PROF_SRC_RECORDER_REGISTRY_H_

#include <memory>
#include <mutex>
#include <vector>

#include "thread_recorder.h"

namespace paddle_prof::internal {

class RecorderRegistry {
 public:
  static RecorderRegistry& Get();

  ThreadRecorder* Register(int os_tid, std::string thread_name);

  // Every recorder, with the registry held until `lock` is released: none is handed
  // to a new thread while the collector reads it.
  std::vector<const ThreadRecorder*> LockAll(std::unique_lock<std::mutex>* lock);

  // Frees the interned names of recorders whose thread exited. Only as a window opens:
  // the collector of the last one is done, and no later window reads their records.
  void ReleaseRetiredNames();
  // In a forked child, with the registry held by the fork hook: no recorder writes into
  // the parent's capture files (ThreadRecorder::DetachCaptureInChild).
  void DetachCapturesInChild();
  // Held across fork(), so that the child finds it free (see the fork hook).
  void LockForFork() { mu_.lock(); }
  void UnlockAfterFork() { mu_.unlock(); }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<ThreadRecorder>> recorders_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_RECORDER_REGISTRY_H_
