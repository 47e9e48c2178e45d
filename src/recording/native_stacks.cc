#include "native_stacks.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <utility>

#include "native_guard.h"
#include "place_registry.h"

namespace paddle_prof::internal {

namespace {

constexpr int kMaxFrames = 16;
// Frames taken: the profiler's own (the hook, the tracker) come first and are left out.
constexpr int kRawFrames = kMaxFrames + 8;

using Backtrace = int (*)(void**, int);
std::atomic<Backtrace> g_backtrace{nullptr};

struct Table {
  std::mutex mu;
  std::deque<std::vector<uintptr_t>> by_id;  // id - 1
  std::map<std::vector<uintptr_t>, uint32_t> ids;
};

Table& GetTable() {
  static auto* table = new Table;  // leaked: blocks are allocated during exit too
  return *table;
}

// A thread's stacks seen before, by a 64-bit hash of their addresses: a stack seen
// again costs the unwind, the hash and one probe.
struct ThreadCache {
  static constexpr size_t kSlots = 4096;  // a power of two
  struct Slot {
    uint64_t hash = 0;
    uint32_t id = 0;
  };
  Slot slots[kSlots];
};

void LoadUnwinder() {
  if (g_backtrace.load(std::memory_order_acquire) != nullptr) return;
  NativeGuard profiler_memory;
  void* library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return;
  // One cache of unwind information per thread: no lock shared with other threads.
  using SetCaching = int (*)(void*, int);
  auto set_caching = reinterpret_cast<SetCaching>(dlsym(library, "_ULx86_64_set_caching_policy"));
  auto* address_space = static_cast<void**>(dlsym(library, "_ULx86_64_local_addr_space"));
  constexpr int kCachePerThread = 2;  // UNW_CACHE_PER_THREAD
  if (set_caching != nullptr && address_space != nullptr) set_caching(*address_space, kCachePerThread);
  g_backtrace.store(reinterpret_cast<Backtrace>(dlsym(library, "unw_backtrace")),
                    std::memory_order_release);
}

uint32_t Intern(const uintptr_t* frames, int count) {
  NativeGuard profiler_memory;
  Table& t = GetTable();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<uintptr_t> key(frames, frames + count);
  const auto [it, added] = t.ids.try_emplace(key, static_cast<uint32_t>(t.by_id.size() + 1));
  if (added) t.by_id.push_back(std::move(key));
  return it->second;
}

// "at::native::empty_cpu" from "at::native::empty_cpu(c10::ArrayRef<long>, ...)": the
// parameters make a frame several lines long.
std::string WithoutParameters(std::string name) {
  size_t end = name.size();
  if (end >= 6 && name.compare(end - 6, 6, " const") == 0) end -= 6;
  if (end == 0 || name[end - 1] != ')') return name;
  int depth = 0;
  for (size_t i = end; i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return name.substr(0, i);
  }
  return name;
}

std::string BaseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

}  // namespace

void LockNativeStacksForFork() { GetTable().mu.lock(); }
void UnlockNativeStacksAfterFork() { GetTable().mu.unlock(); }

bool CaptureNativeStacks(bool on) {
  if (on && g_native_place_index.load(std::memory_order_relaxed) >= 0) LoadUnwinder();
  const bool capturing = on && g_backtrace.load(std::memory_order_acquire) != nullptr;
  g_native_stacks.store(capturing, std::memory_order_relaxed);
  return capturing;
}

uint32_t CaptureNativeStack() {
  const Backtrace backtrace = g_backtrace.load(std::memory_order_acquire);
  if (backtrace == nullptr) return 0;
  // What the unwinder or the cache allocates is the profiler's, and not unwound again.
  static thread_local bool capturing = false;
  if (capturing) return 0;
  capturing = true;
  void* raw[kRawFrames];
  const int count = backtrace(raw, kRawFrames);
  uint32_t id = 0;
  if (count > 0) {
    uint64_t hash = 1469598103934665603ull;
    for (int i = 0; i < count; ++i) hash = (hash ^ reinterpret_cast<uintptr_t>(raw[i])) * 1099511628211ull;
    hash |= 1;  // never 0, an empty slot's
    ThreadCache* cache = ThreadOwned<ThreadCache>();  // null as the thread exits
    if (cache == nullptr) {
      id = Intern(reinterpret_cast<const uintptr_t*>(raw), count);
    } else {
      ThreadCache::Slot& slot = cache->slots[hash & (ThreadCache::kSlots - 1)];
      if (slot.hash != hash) {
        slot.id = Intern(reinterpret_cast<const uintptr_t*>(raw), count);
        slot.hash = hash;
      }
      id = slot.id;
    }
  }
  capturing = false;
  return id;
}

std::vector<std::string> NativeFrames(uint32_t id) {
  std::vector<uintptr_t> addresses;
  {
    Table& t = GetTable();
    std::lock_guard<std::mutex> lock(t.mu);
    if (id == 0 || id > t.by_id.size()) return {};
    addresses = t.by_id[id - 1];
  }
  std::vector<std::string> frames;
  for (const uintptr_t address : addresses) {
    // A return address: the call is the instruction before it.
    const void* call = reinterpret_cast<const void*>(address - 1);
    Dl_info info{};
    if (dladdr(call, &info) == 0 || info.dli_fname == nullptr) {
      if (!frames.empty()) frames.push_back("?");
      continue;
    }
    const std::string object = BaseName(info.dli_fname);
    if (frames.empty() && object.rfind("libpaddle_prof", 0) == 0) continue;  // our own frames
    if (info.dli_sname == nullptr) {
      char offset[32];
      std::snprintf(offset, sizeof(offset), "+0x%zx",
                    static_cast<size_t>(address - reinterpret_cast<uintptr_t>(info.dli_fbase)));
      frames.push_back(object + offset);
    } else {
      int status = 0;
      char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
      frames.push_back(WithoutParameters(status == 0 ? demangled : info.dli_sname) + " (" + object + ")");
      std::free(demangled);
    }
    if (frames.size() == kMaxFrames) break;
  }
  return frames;
}

}  // namespace paddle_prof::internal
