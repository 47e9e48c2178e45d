#include "window_state.h"

namespace paddle_prof::internal {

std::atomic<uint64_t> g_window{0};

}  // namespace paddle_prof::internal
