// An op's inputs as a framework's bridge notes them (op_details.h), written into a trace
// event's args as torch.profiler's traces have them: `Input Dims`, `Input type`.
#ifndef PADDLE_PROF_SRC_OP_INPUTS_H_
#define PADDLE_PROF_SRC_OP_INPUTS_H_

#include <string_view>

#include "json_writer.h"

namespace paddle_prof::internal {

// Writes the two fields into the open object of `w` when `inputs` is what a bridge
// writes, `[<dims>, <types>]`: two lists of one entry per input, each dims entry a list
// of integers (or, for a list of tensors, of such lists), each type a string. Anything
// else (a capture's torn or foreign string) writes nothing; returns whether it wrote.
bool WriteOpInputs(std::string_view inputs, JsonWriter* w);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_OP_INPUTS_H_
