// Links against the installed library and checks one exact count.
#include <paddle_prof/paddle_prof.h>

int main() {
  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  for (int i = 0; i < 3; ++i) PADDLE_PROF_RECORD_EVENT("installed_op");
  const paddle_prof::Report report = paddle_prof::DisableProfiler();
  return report.events.size() == 1 && report.events[0].calls == 3 ? 0 : 1;
}
