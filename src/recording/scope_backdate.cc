#include "scope_backdate.h"

#include "clock.h"
#include "thread_recorder.h"

namespace paddle_prof::internal {

uint64_t ScopeTickNow() { return Clock::Now(); }

void BackdateOpenScopes(int count, uint64_t tick) {
  if (ThreadRecorder* r = ThreadRecorder::CurrentIfRegistered()) r->BackdateOpenScopes(count, tick);
}

}  // namespace paddle_prof::internal
