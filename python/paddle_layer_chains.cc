#include "paddle_layer_chains.h"

#include <memory>
#include <unordered_map>
#include <utility>

#include "paddle_open_ops.h"

namespace paddle_prof::paddle_bridge {
namespace {

// The event names of layer backward calls, "nn.Layer: <path>.backward", by path, and
// the chains of them by id. Under the GIL.
struct LayerChains {
  std::unordered_map<std::string, std::unique_ptr<const std::string>> names;
  std::vector<std::vector<const char*>> chains;
};
LayerChains* g_layer_chains = nullptr;

const std::vector<const char*>* ChainOf(int id) {
  if (g_layer_chains == nullptr || id < 0 ||
      id >= static_cast<int>(g_layer_chains->chains.size())) {
    return nullptr;
  }
  return &g_layer_chains->chains[id];
}

}  // namespace

int RegisterLayerChain(const std::vector<std::string>& paths) {
  internal::NativeGuard profiler_memory;
  if (g_layer_chains == nullptr) g_layer_chains = new LayerChains();
  std::vector<const char*> chain;
  for (const std::string& path : paths) {
    auto& name = g_layer_chains->names[path];
    if (name == nullptr) name = std::make_unique<const std::string>("nn.Layer: " + path + ".backward");
    chain.push_back(name->c_str());
  }
  g_layer_chains->chains.push_back(std::move(chain));
  return static_cast<int>(g_layer_chains->chains.size()) - 1;
}

void OpenLayerBackward(int chain) {
  if (!IsProfilerEnabled()) return;
  const std::vector<const char*>* names = ChainOf(chain);
  if (OpenOps* ops = internal::ThreadOwned<OpenOps>(); ops != nullptr && names != nullptr) {
    ops->OpenLayers(*names);
  }
}

void CloseLayerBackward(int chain) {
  const std::vector<const char*>* names = ChainOf(chain);
  OpenOps* ops = internal::ThreadOwned<OpenOps>(/*make=*/false);
  if (ops != nullptr && names != nullptr) ops->CloseLayers(*names);
}

void EndLayerBackward() {
  if (OpenOps* ops = internal::ThreadOwned<OpenOps>(/*make=*/false)) {
    ops->OpenWaiting(0);
    ops->CloseLayersTo(0);
  }
}

}  // namespace paddle_prof::paddle_bridge
