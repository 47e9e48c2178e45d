// The collection's pass over each thread's records: its allocations and frees into
// Collection::memory_events and, in the same read, what its calls add up to into
// Collection::thread_calls (a second pass over a window's records waits on their memory
// again). Where a trace is written beside the report, which needs the memory events
// first, the report reads the calls on its own thread instead, beside the trace.
#ifndef PADDLE_PROF_SRC_RECORD_SCAN_H_
#define PADDLE_PROF_SRC_RECORD_SCAN_H_

#include <vector>

#include "call_rows.h"
#include "collection.h"

namespace paddle_prof::internal {

// Fills `c->memory_events` (all threads', sorted by tick, into the memory the vector
// already has: a window's stop hands in the last one's, as fresh pages cost more than
// the gathering) and, with `calls`, `c->thread_calls` (one per thread; else none). Reads
// every other field the report's rows depend on, `gpu_correlation` included: call it
// last.
void ScanRecords(Collection* c, bool calls);

// What each thread's calls add up to, read alone (by position in `c.threads`).
std::vector<ThreadCalls> ScanCalls(const Collection& c);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_RECORD_SCAN_H_
