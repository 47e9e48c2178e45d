// Collective communication on CPU is phi::distributed::GlooCommContext's, which
// libpaddle.so calls through its import slots: the Paddle bridge points those at hooks
// here, which record each call as an event "gloo:<collective>", which the report counts
// as communication (step_communication.h).
#ifndef PADDLE_PROF_PYTHON_PADDLE_COLLECTIVES_H_
#define PADDLE_PROF_PYTHON_PADDLE_COLLECTIVES_H_

#include <functional>

namespace paddle_prof::paddle_bridge {

// Finds each collective's original by its symbol with `definition` (null: the loaded
// Paddle has none, as a build without gloo).
void FindCollectives(const std::function<void*(const char* symbol)>& definition);

// The hook for the import slot of `symbol`, if it is a collective whose original was
// found; else null.
const void* CollectiveHook(const char* symbol);

}  // namespace paddle_prof::paddle_bridge

#endif  // PADDLE_PROF_PYTHON_PADDLE_COLLECTIVES_H_
