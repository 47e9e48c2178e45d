#include "op_details.h"

#include "thread_recorder.h"

namespace paddle_prof::internal {

void NoteOpInputs(const void* event, std::string_view inputs) {
  ThreadRecorder::NoteInputs(event, inputs);
}

void NoteOpSequence(const void* event, int64_t number, uint64_t forward_thread,
                    uint64_t torch_thread) {
  ThreadRecorder::NoteSequence(event, number, forward_thread, torch_thread);
}

}  // namespace paddle_prof::internal
