// A PaddlePaddle layer's backward events ("nn.Layer: Net.fc1.backward"), opened and
// closed on the thread running the backward pass as paddle_prof/paddle/layer_backward.py's
// tensor hooks say, around the grad node waiting (paddle_open_ops.h). A chain is a call's
// callers' paths and its own, outermost first, registered once; its events' names are
// kept for good (an event's name outlives its window).
#ifndef PADDLE_PROF_PYTHON_PADDLE_LAYER_CHAINS_H_
#define PADDLE_PROF_PYTHON_PADDLE_LAYER_CHAINS_H_

#include <string>
#include <vector>

namespace paddle_prof::paddle_bridge {

// The id of the chain of `paths`. Under the GIL, as the three below.
int RegisterLayerChain(const std::vector<std::string>& paths);
// Has the backward events of `chain`'s layers open on this thread (those of another
// chain closed first).
void OpenLayerBackward(int chain);
// Closes the backward event of `chain`'s last layer, and those inside it, if open.
void CloseLayerBackward(int chain);
// The backward pass returned on this thread: its layer events close.
void EndLayerBackward();

}  // namespace paddle_prof::paddle_bridge

#endif  // PADDLE_PROF_PYTHON_PADDLE_LAYER_CHAINS_H_
