// What a framework's bridge tells of an op beyond its name and tag, kept with the op's
// scope and written to the trace as torch.profiler's traces have it: its inputs' dims
// and types (`Input Dims`, `Input type`), and torch's sequence number, which a forward op
// and the backward node autograd ran for it share, drawn as an arrow between them
// (autograd_links.h).
#ifndef PADDLE_PROF_SRC_OP_DETAILS_H_
#define PADDLE_PROF_SRC_OP_DETAILS_H_

#include <cstdint>
#include <string_view>

namespace paddle_prof::internal {

// For the scope `event` (a RecordEvent) has just begun on this thread, if it did begin
// one: its inputs, as JSON `[<dims>, <types>]`, two lists of one entry per input (a
// tensor's sizes and dtype, a list of ints' values and "ScalarList", [] and "Scalar" for
// a scalar, [] and "" for None), which the trace checks before it writes them.
void NoteOpInputs(const void* event, std::string_view inputs);

// For the scope `event` has just begun on this thread, if it did begin one: its op's
// sequence `number` (none when negative), and the ids torch gives threads
// (at::RecordFunction::currentThreadId): its forward op's thread for a backward node
// (`forward_thread`, else 0), and this thread.
void NoteOpSequence(const void* event, int64_t number, uint64_t forward_thread,
                    uint64_t torch_thread);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_OP_DETAILS_H_
