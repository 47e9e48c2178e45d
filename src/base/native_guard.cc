#include "native_guard.h"

namespace paddle_prof::internal {

thread_local int t_native_guard __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace paddle_prof::internal
