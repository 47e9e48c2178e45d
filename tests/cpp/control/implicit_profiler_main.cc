// A program that records scopes but never enables the profiler itself: run with
// FLAGS_paddle_prof_state=CPU, the library profiles it and prints the report at exit.
#include "paddle_prof/record_event.h"

int main() {
  for (int i = 0; i < 3; ++i) {
    PADDLE_PROF_RECORD_EVENT("outer");
    for (int j = 0; j < 10; ++j) {
      PADDLE_PROF_RECORD_EVENT("leaf");
    }
  }
  return 0;
}
