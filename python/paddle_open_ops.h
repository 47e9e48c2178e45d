// The Paddle bridge's state on each thread (python/paddle_bridge.cc): the ops open in
// Paddle, the grad node whose event waits for its tensor hooks, and the layer backward
// events open around them (paddle_layer_chains.h). Paddle runs a grad node's tensor
// hooks inside the node, after its event began; so while layer events are on, a grad
// node's event waits, and opens once its hooks have run (or as soon as anything is
// recorded inside it), inside the layer events they opened, with its start and theirs
// moved back to when Paddle began the node (scope_backdate.h).
#ifndef PADDLE_PROF_PYTHON_PADDLE_OPEN_OPS_H_
#define PADDLE_PROF_PYTHON_PADDLE_OPEN_OPS_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "bindings_api.h"
#include "paddle_prof/paddle_prof.h"

namespace paddle_prof::paddle_bridge {

// Whether layer backward events are on (a window with layers is open): grad nodes'
// events then wait for their hooks.
inline std::atomic<bool> g_layer_backward{false};

// Each thread's ops open in Paddle, innermost last: the Paddle event that opened each of
// ours, so that its End() closes it (End() may come twice: explicitly, then from the
// destructor); the grad node whose event waits; and the layer backward events open,
// which are around every op open.
class OpenOps {
 public:
  std::optional<RecordEvent>* Push(const void* paddle_event) {
    if (depth_ == kDepth) return nullptr;
    Entry& e = entries_[depth_++];
    e.paddle_event = paddle_event;
    return &e.event;
  }
  // Ends the op `paddle_event` opened, and any left open inside it.
  void End(const void* paddle_event) {
    if (waiting_.paddle_event == paddle_event) OpenWaiting(0);
    for (int d = depth_ - 1; d >= 0; --d) {
      if (entries_[d].paddle_event != paddle_event) continue;
      while (depth_ > d) entries_[--depth_].event.reset();
      return;
    }
  }
  char name[256];  // a grad node's op name, written here: no allocation per op

  // The grad node `paddle_event`, named `op`, begun by Paddle now: its event waits.
  void Wait(const void* paddle_event, std::string_view op) {
    OpenWaiting(0);
    if (op.size() > sizeof(waiting_.name)) {  // no room: opened at once
      if (std::optional<RecordEvent>* event = Push(paddle_event)) event->emplace(op);
      return;
    }
    waiting_.paddle_event = paddle_event;
    waiting_.layers_named = false;
    waiting_.start = internal::ScopeTickNow();
    waiting_.size = op.size();
    std::memcpy(waiting_.name, op.data(), op.size());
  }
  // Opens the waiting grad node's event, if any, inside the `layers_opened` layer events
  // just opened for it: all begin when Paddle began the node.
  void OpenWaiting(int layers_opened) {
    if (waiting_.paddle_event == nullptr) return;
    const void* paddle_event = waiting_.paddle_event;
    waiting_.paddle_event = nullptr;
    if (std::optional<RecordEvent>* event = Push(paddle_event)) {
      event->emplace(std::string_view(waiting_.name, waiting_.size));
      internal::BackdateOpenScopes(layers_opened + 1, waiting_.start);
    }
  }

  // Has the layer events of `chain` (outermost first, each a name RegisterLayerChain keeps)
  // open, as the grad node waiting (if any) begins: those of other chains are closed
  // first. Layer events move only between ops (none open on the thread but a waiting
  // one), so that they are around every op.
  void OpenLayers(const std::vector<const char*>& chain) {
    if (depth_ > 0) return;
    waiting_.layers_named = true;
    const size_t keep = OpenOf(chain);
    if (keep == chain.size()) return;  // open already, perhaps with a layer inside it
    CloseLayersTo(keep);
    int opened = 0;
    for (size_t i = keep; i < chain.size() && layer_depth_ < kLayerDepth; ++i, ++opened) {
      Layer& layer = layers_[layer_depth_++];
      layer.name = chain[i];
      layer.event.emplace(chain[i]);  // kept for good: not interned
    }
    OpenWaiting(opened);
  }
  // Closes the layer event of `chain`'s last, and those inside it, if it is open; not
  // when a hook of the waiting grad node named its layers already (a layer called again
  // on its own output: the node is its earlier call's, still that layer's).
  void CloseLayers(const std::vector<const char*>& chain) {
    if (depth_ > 0 || chain.empty() || OpenOf(chain) < chain.size()) return;
    if (waiting_.paddle_event != nullptr && waiting_.layers_named) return;
    CloseLayersTo(chain.size() - 1);
  }
  void CloseLayersTo(size_t depth) {
    if (layer_depth_ <= depth) return;
    while (layer_depth_ > depth) layers_[--layer_depth_].event.reset();
    // A node waiting begins after them, not when Paddle began it: events nest.
    if (waiting_.paddle_event != nullptr) waiting_.start = internal::ScopeTickNow();
  }

 private:
  // How many of `chain`'s layers, outermost first, have their events open.
  size_t OpenOf(const std::vector<const char*>& chain) const {
    size_t open = 0;
    while (open < layer_depth_ && open < chain.size() && layers_[open].name == chain[open]) ++open;
    return open;
  }

  struct Entry {
    const void* paddle_event;
    std::optional<RecordEvent> event;
  };
  static constexpr int kDepth = 64;
  Entry entries_[kDepth];
  int depth_ = 0;
  struct Waiting {
    const void* paddle_event = nullptr;  // null: none waits
    bool layers_named = false;           // a hook opened its layers' events
    uint64_t start = 0;
    size_t size = 0;
    char name[256];
  };
  Waiting waiting_;
  struct Layer {
    const char* name;
    std::optional<RecordEvent> event;
  };
  static constexpr size_t kLayerDepth = 32;
  Layer layers_[kLayerDepth];
  size_t layer_depth_ = 0;
};

}  // namespace paddle_prof::paddle_bridge

#endif  // PADDLE_PROF_PYTHON_PADDLE_OPEN_OPS_H_
