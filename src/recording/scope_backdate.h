// A scope whose opening had to wait for what runs first inside it keeps the time it
// really began: the Paddle bridge opens a grad node's event only once the tensor hooks
// the node runs first have opened the layer events that belong around it
// (python/paddle_bridge.cc), and then moves those events' starts and the node's back to
// the moment Paddle began the node.
#ifndef PADDLE_PROF_SRC_SCOPE_BACKDATE_H_
#define PADDLE_PROF_SRC_SCOPE_BACKDATE_H_

#include <cstdint>

namespace paddle_prof::internal {

// The tick (Clock::Now()) for a later BackdateOpenScopes.
uint64_t ScopeTickNow();

// Moves the start of this thread's `count` innermost open scopes back to `tick`, none
// before the start of the scope around them; scopes that began before `tick` keep theirs.
void BackdateOpenScopes(int count, uint64_t tick);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_SCOPE_BACKDATE_H_
