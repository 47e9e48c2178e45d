// paddle_prof._paddle_bridge: PaddlePaddle's ops and memory, taken where Paddle tells its
// own profiler of them. Paddle calls its profiler's entry points whether that profiler
// runs or not: phi::RecordEvent's constructors and End() around each op (eager `matmul
// dygraph`, grad nodes `Global_MatmulGradNode`, static `pd_op.matmul`), and
// paddle::platform::RecordMemEvent's constructor at each allocation and free of its
// allocator, with the place and the exact size. libpaddle.so and libphi_core.so make those
// calls through their import slots (libphi_core.so to its own exported functions too),
// so install() points the slots at hooks here (import_slots.h), which call Paddle's own
// function and then record: an Operator event opens ours under the op's name, its End()
// closes it, and each allocation and free is tracked on its place. Paddle's finer events
// (infer_meta, kernel launch, its executor's bookkeeping) are not ops: left to Paddle.
// The layouts read here are Paddle 3.x's; paddle_prof/paddle/ serves no other.
// The same slots take gloo's collectives (paddle_collectives.h); each thread's open ops
// and the layer backward events around them are paddle_open_ops.h's and
// paddle_layer_chains.h's.
#include <dlfcn.h>
#include <link.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "bindings_api.h"
#include "paddle_collectives.h"
#include "paddle_layer_chains.h"
#include "paddle_open_ops.h"
#include "paddle_prof/paddle_prof.h"

namespace paddle_prof::paddle_bridge {
namespace {

// phi::RecordEvent(const char*, TracerEventType, uint32_t level, EventRole), its
// std::string form, End(); paddle::platform::RecordMemEvent(const void*, const
// phi::Place&, size_t, TracerMemEventType): the constructors' complete-object (C1) names.
constexpr char kEventOfLiteral[] = "_ZN3phi11RecordEventC1EPKcNS_15TracerEventTypeEjNS_9EventRoleE";
constexpr char kEventOfString[] =
    "_ZN3phi11RecordEventC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEENS_"
    "15TracerEventTypeEjNS_9EventRoleE";
constexpr char kEventEnd[] = "_ZN3phi11RecordEvent3EndEv";
constexpr char kMemEvent[] =
    "_ZN6paddle8platform14RecordMemEventC1EPKvRKN3phi5PlaceEmNS4_18TracerMemEventTypeE";

constexpr int kOperator = 0;               // phi::TracerEventType::Operator
constexpr int kAllocate = 0, kFree = 1;    // phi::TracerMemEventType
// phi::Place's first members (paddle/phi/common/place.h): the device, then the
// AllocationType, one byte each.
struct PaddlePlace {
  int8_t device;
  int8_t type;
};
constexpr int8_t kPaddleCpu = 1, kPaddleGpu = 2, kPaddleGpuPinned = 3;

using EventOfLiteral = void (*)(void*, const char*, int, unsigned, int);
using EventOfString = void (*)(void*, const std::string&, int, unsigned, int);
using EventEnd = void (*)(void*);
using MemEvent = void (*)(void*, const void*, const PaddlePlace&, size_t, int);

// Paddle's own functions, set before any slot points at a hook.
EventOfLiteral g_event_of_literal = nullptr;
EventOfString g_event_of_string = nullptr;
EventEnd g_event_end = nullptr;
MemEvent g_mem_event = nullptr;



// The op's name as Paddle's own op list spells it, the same in both modes: "matmul
// dygraph" and "pd_op.matmul" are `matmul`, the grad node "Global_MatmulGradNode" is
// `matmul_grad` (its class name in snake case), written in `buffer` when it is changed.
std::string_view OpName(std::string_view name, char (&buffer)[256]) {
  constexpr std::string_view kEager = " dygraph", kStatic = "pd_op.", kNode = "Global_",
                             kGradNode = "GradNode";
  if (name.size() > kEager.size() && name.substr(name.size() - kEager.size()) == kEager) {
    return name.substr(0, name.size() - kEager.size());
  }
  if (name.substr(0, kStatic.size()) == kStatic) return name.substr(kStatic.size());
  if (name.substr(0, kNode.size()) != kNode) return name;
  name.remove_prefix(kNode.size());
  if (name.size() <= kGradNode.size() || name.substr(name.size() - kGradNode.size()) != kGradNode) {
    return name;  // GradNodeAccumulation: a node of its own, not an op's gradient
  }
  name.remove_suffix(kGradNode.size());
  while (!name.empty() && name.back() == '_') name.remove_suffix(1);  // an in-place op's
  size_t n = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool upper = c >= 'A' && c <= 'Z';
    if (n + 8 > sizeof(buffer)) return name;  // no room: the class name as it is
    if (upper && i > 0 && name[i - 1] != '_') buffer[n++] = '_';
    buffer[n++] = upper ? static_cast<char>(c - 'A' + 'a') : c;
  }
  std::memcpy(buffer + n, "_grad", 5);
  return std::string_view(buffer, n + 5);
}

void OpenOp(void* paddle_event, std::string_view name) {
  OpenOps* ops = internal::ThreadOwned<OpenOps>();
  if (ops == nullptr) return;  // the thread is exiting
  ops->OpenWaiting(0);  // an op inside a waiting grad node: the node opens first
  if (g_layer_backward.load(std::memory_order_relaxed) &&
      name.find("GradNode") != std::string_view::npos) {
    ops->Wait(paddle_event, OpName(name, ops->name));
    return;
  }
  if (std::optional<RecordEvent>* event = ops->Push(paddle_event)) {
    event->emplace(OpName(name, ops->name));  // interned: a grad node's name is a temporary
  }
}

void HookEventOfLiteral(void* self, const char* name, int type, unsigned level, int role) {
  g_event_of_literal(self, name, type, level, role);
  if (type == kOperator && IsProfilerEnabled()) OpenOp(self, name);
}

void HookEventOfString(void* self, const std::string& name, int type, unsigned level, int role) {
  g_event_of_string(self, name, type, level, role);
  if (type == kOperator && IsProfilerEnabled()) OpenOp(self, name);
}

void HookEventEnd(void* self) {
  if (OpenOps* ops = internal::ThreadOwned<OpenOps>(/*make=*/false)) ops->End(self);
  g_event_end(self);
}


// The place index of Paddle's place, or -1 for one not tracked (XPU, custom devices).
int PlaceOf(const PaddlePlace& place) {
  static const int cpu = internal::PlaceIndex(CPUPlace());
  if (place.type == kPaddleCpu) return cpu;
  if (place.type == kPaddleGpuPinned) {
    static const int pinned = internal::PlaceIndex(CUDAPinnedPlace());
    return pinned;
  }
  if (place.type != kPaddleGpu || place.device < 0) return -1;
  // Index + 1, 0 while not looked up: allocator threads may look one up at once, and
  // agree (a lookup is idempotent).
  static std::atomic<int> gpus[128] = {};
  std::atomic<int>& known = gpus[place.device];
  int index = known.load(std::memory_order_relaxed);
  if (index == 0) {
    index = internal::PlaceIndex(CUDAPlace(place.device)) + 1;
    known.store(index, std::memory_order_relaxed);
  }
  return index - 1;
}

void HookMemEvent(void* self, const void* ptr, const PaddlePlace& place, size_t size, int type) {
  g_mem_event(self, ptr, place, size, type);
  if (type != kAllocate && type != kFree) return;  // reserved memory: the allocator's own
  const int index = PlaceOf(place);
  if (index < 0) return;
  if (g_layer_backward.load(std::memory_order_relaxed)) {  // a waiting grad node's block
    if (OpenOps* ops = internal::ThreadOwned<OpenOps>(/*make=*/false)) ops->OpenWaiting(0);
  }
  if (type == kAllocate) {
    internal::TrackAlloc(index, ptr, size);
  } else {
    internal::TrackFree(index, ptr);
  }
}

const void* HookFor(const char* name) {
  if (std::strcmp(name, kEventOfLiteral) == 0) return reinterpret_cast<const void*>(&HookEventOfLiteral);
  if (std::strcmp(name, kEventOfString) == 0) return reinterpret_cast<const void*>(&HookEventOfString);
  if (std::strcmp(name, kEventEnd) == 0) return reinterpret_cast<const void*>(&HookEventEnd);
  if (std::strcmp(name, kMemEvent) == 0) return reinterpret_cast<const void*>(&HookMemEvent);
  return CollectiveHook(name);
}

bool IsPaddles(const char* path) {
  return std::strstr(path, "/paddle/") != nullptr && !internal::IsProfilersObject(path);
}

int NotePaddleObject(dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name != nullptr && IsPaddles(info->dlpi_name)) {
    static_cast<std::vector<std::pair<std::string, uintptr_t>>*>(data)->emplace_back(
        info->dlpi_name, info->dlpi_addr);
  }
  return 0;
}

// `name`'s definition in the loaded Paddle object that defines it, or null.
void* PaddleDefinition(const std::vector<std::pair<std::string, uintptr_t>>& objects,
                       const char* name) {
  for (const auto& [path, base] : objects) {
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* found = dlsym(handle, name);
    dlclose(handle);
    Dl_info info{};
    if (found != nullptr && dladdr(found, &info) != 0 &&
        reinterpret_cast<uintptr_t>(info.dli_fbase) == base) {
      return found;
    }
  }
  return nullptr;
}

std::mutex g_mu;
std::vector<internal::PatchedSlot>* g_patched = nullptr;  // under g_mu; kept for good

// Points the loaded Paddle objects' slots at the hooks (at the import of paddle_prof.paddle,
// once Paddle's libraries are loaded); returns the entry points it could not find in them.
std::vector<std::string> Install() {
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<std::pair<std::string, uintptr_t>> objects;
  dl_iterate_phdr(&NotePaddleObject, &objects);
  std::vector<std::string> missing;
  if (g_patched == nullptr) {
    const auto find = [&](auto* out, const char* name) {
      *out = reinterpret_cast<std::remove_reference_t<decltype(*out)>>(PaddleDefinition(objects, name));
      if (*out == nullptr) missing.emplace_back(name);
    };
    find(&g_event_of_literal, kEventOfLiteral);
    find(&g_event_of_string, kEventOfString);
    find(&g_event_end, kEventEnd);
    find(&g_mem_event, kMemEvent);
    if (!missing.empty()) return missing;
    // Optional: a build without gloo has none.
    FindCollectives([&](const char* symbol) { return PaddleDefinition(objects, symbol); });
    g_patched = new std::vector<internal::PatchedSlot>();
  }
  internal::PatchImportSlots(&IsPaddles, &HookFor, g_patched);
  return missing;
}

}  // namespace
}  // namespace paddle_prof::paddle_bridge

namespace py = pybind11;

PYBIND11_MODULE(_paddle_bridge, m) {
  m.doc() = "paddle_prof's PaddlePaddle bridge; use paddle_prof.paddle instead.";
  m.def("install", &paddle_prof::paddle_bridge::Install,
        "Points the loaded Paddle objects' calls to its profiler's entry points at the "
        "bridge's hooks; returns the entry points not found (none: installed).");
  m.def("set_layer_backward",
        [](bool on) { paddle_prof::paddle_bridge::g_layer_backward.store(on); },
        "Whether grad nodes' events wait for the layer backward events their hooks open.");
  m.def("register_layer_chain", &paddle_prof::paddle_bridge::RegisterLayerChain,
        "The id of a chain of layer paths (a call's callers', outermost first, then its "
        "own), whose backward events are named for good.");
  // A tensor hook's gradient comes as a second argument, unread: the hook is
  // functools.partial(open_layer_backward, chain), with no Python frame of its own.
  m.def("open_layer_backward",
        [](int chain, const py::object&) { paddle_prof::paddle_bridge::OpenLayerBackward(chain); },
        py::arg("chain"), py::arg("grad") = py::none(),
        "Has the backward events of a chain's layers open on this thread, around the grad "
        "node waiting.");
  m.def("close_layer_backward",
        [](int chain, const py::object&) { paddle_prof::paddle_bridge::CloseLayerBackward(chain); },
        py::arg("chain"), py::arg("grad") = py::none(),
        "Closes the backward event of a chain's last layer, if open.");
  m.def("end_layer_backward", &paddle_prof::paddle_bridge::EndLayerBackward,
        "Closes this thread's layer backward events: its backward pass returned.");
}
