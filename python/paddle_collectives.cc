#include "paddle_collectives.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "paddle_open_ops.h"

namespace paddle_prof::paddle_bridge {
namespace {

// GlooCommContext's collectives: void member functions whose arguments (`this`, then at
// most five pointers and integers) all pass in integer registers, so that one hook shape
// forwards them all (x86-64 and AArch64 calling conventions). Their originals, when the
// loaded Paddle has them (a build without gloo has none).
struct Collective {
  const char* symbol;
  const char* event;
  void* original;
};
Collective g_collectives[] = {
    {"_ZN3phi11distributed15GlooCommContext9AllReduceEPNS_11DenseTensorERKS2_ij",
     "gloo:all_reduce", nullptr},
    {"_ZN3phi11distributed15GlooCommContext9BroadcastEPNS_11DenseTensorERKS2_ij",
     "gloo:broadcast", nullptr},
    {"_ZN3phi11distributed15GlooCommContext6ReduceEPNS_11DenseTensorERKS2_iij", "gloo:reduce",
     nullptr},
    {"_ZN3phi11distributed15GlooCommContext9AllGatherEPNS_11DenseTensorERKS2_j",
     "gloo:all_gather", nullptr},
    {"_ZN3phi11distributed15GlooCommContext6GatherEPNS_11DenseTensorERKS2_ij", "gloo:gather",
     nullptr},
    {"_ZN3phi11distributed15GlooCommContext7ScatterEPNS_11DenseTensorERKS2_iij", "gloo:scatter",
     nullptr},
    {"_ZN3phi11distributed15GlooCommContext7BarrierEv", "gloo:barrier", nullptr},
    {"_ZN3phi11distributed15GlooCommContext4SendERKNS_11DenseTensorEij", "gloo:send", nullptr},
    {"_ZN3phi11distributed15GlooCommContext4RecvEPNS_11DenseTensorEij", "gloo:recv", nullptr},
};
constexpr int kCollectives = sizeof(g_collectives) / sizeof(g_collectives[0]);

template <int I>
void HookCollective(uintptr_t self, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d,
                    uintptr_t e) {
  if (g_layer_backward.load(std::memory_order_relaxed)) {  // inside a waiting grad node
    if (OpenOps* ops = internal::ThreadOwned<OpenOps>(/*make=*/false)) ops->OpenWaiting(0);
  }
  RecordEvent event(g_collectives[I].event);
  using Original = void (*)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
  reinterpret_cast<Original>(g_collectives[I].original)(self, a, b, c, d, e);
}

template <int... I>
const void* HookOf(const char* name, std::integer_sequence<int, I...>) {
  const void* hooks[] = {reinterpret_cast<const void*>(&HookCollective<I>)...};
  for (int i = 0; i < kCollectives; ++i) {
    if (g_collectives[i].original != nullptr && std::strcmp(name, g_collectives[i].symbol) == 0) {
      return hooks[i];
    }
  }
  return nullptr;
}

}  // namespace

void FindCollectives(const std::function<void*(const char* symbol)>& definition) {
  for (Collective& collective : g_collectives) collective.original = definition(collective.symbol);
}

const void* CollectiveHook(const char* symbol) {
  return HookOf(symbol, std::make_integer_sequence<int, kCollectives>());
}

}  // namespace paddle_prof::paddle_bridge
