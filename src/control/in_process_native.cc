#include "in_process_native.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "import_slots.h"
#include "live_block_table.h"
#include "memory_tracker.h"
#include "native_guard.h"
#include "paddle_prof/place.h"
#include "place_registry.h"

namespace paddle_prof::internal {
namespace {

// The process's malloc family, as the global scope resolves it; the hooks forward here.
struct MallocFamily {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  size_t (*malloc_usable_size)(void*);
  void* (*dlopen)(const char*, int);
};
MallocFamily g_real;

std::atomic<int> g_place{-1};         // the native place while tracking, else -1
std::recursive_mutex g_mu;             // patching; recursive: a rescan may meet a hook
bool g_on = false;                     // under g_mu
bool g_fork_handler = false;           // under g_mu

inline int Place() { return t_native_guard != 0 ? -1 : g_place.load(std::memory_order_relaxed); }
void Rescan();
inline void* Tracked(int place, void* ptr, size_t size) {
  if (place >= 0 && ptr != nullptr) TrackAlloc(place, ptr, size);
  return ptr;
}

void* Malloc(size_t size) {
  const int place = Place();
  return Tracked(place, g_real.malloc(size), size);
}
void Free(void* ptr) {
  if (ptr != nullptr) {
    if (const int place = Place(); place >= 0) TrackFree(place, ptr);
  }
  g_real.free(ptr);
}
void* Calloc(size_t count, size_t size) {
  const int place = Place();
  return Tracked(place, g_real.calloc(count, size), count * size);
}
// A free of the old block plus an allocation of the new one, as the report counts it.
void* Realloc(void* ptr, size_t size) {
  const int place = Place();
  if (ptr == nullptr) return Tracked(place, g_real.malloc(size), size);
  if (place >= 0) TrackFree(place, ptr);
  void* moved = g_real.realloc(ptr, size);
  if (moved == nullptr && size != 0) {  // failed: the old block lives on
    Tracked(place, ptr, g_real.malloc_usable_size(ptr));
    return nullptr;
  }
  return Tracked(place, moved, size);
}
void* Reallocarray(void* ptr, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return Realloc(ptr, bytes);
}
int PosixMemalign(void** out, size_t alignment, size_t size) {
  const int place = Place();
  const int rc = g_real.posix_memalign(out, alignment, size);
  if (rc == 0) Tracked(place, *out, size);
  return rc;
}
void* AlignedAlloc(size_t alignment, size_t size) {
  const int place = Place();
  return Tracked(place, g_real.aligned_alloc(alignment, size), size);
}
void* Memalign(size_t alignment, size_t size) {
  const int place = Place();
  return Tracked(place, g_real.memalign(alignment, size), size);
}
void* Valloc(size_t size) {
  const int place = Place();
  return Tracked(place, g_real.valloc(size), size);
}
void* Pvalloc(size_t size) {
  const int place = Place();
  void* ptr = g_real.pvalloc(size);
  return Tracked(place, ptr, ptr != nullptr ? g_real.malloc_usable_size(ptr) : 0);
}
// A bare name is looked for in the calling object's RUNPATH (or RPATH) first, as dlopen
// would have looked for it had the caller called it (this hook is its caller now); the
// objects loaded are patched before it returns.
void* OpenFromCallersPath(const char* file, int mode, const void* caller);
void* Dlopen(const char* file, int mode) {
  void* handle = nullptr;
  if (file != nullptr && std::strchr(file, '/') == nullptr) {
    handle = OpenFromCallersPath(file, mode, __builtin_return_address(0));
  }
  if (handle == nullptr) handle = g_real.dlopen(file, mode);
  if (handle != nullptr) Rescan();
  return handle;
}

struct Hook {
  const char* name;
  void* hook;
};
const Hook kHooks[] = {
    {"malloc", reinterpret_cast<void*>(&Malloc)},
    {"free", reinterpret_cast<void*>(&Free)},
    {"calloc", reinterpret_cast<void*>(&Calloc)},
    {"realloc", reinterpret_cast<void*>(&Realloc)},
    {"reallocarray", reinterpret_cast<void*>(&Reallocarray)},
    {"posix_memalign", reinterpret_cast<void*>(&PosixMemalign)},
    {"aligned_alloc", reinterpret_cast<void*>(&AlignedAlloc)},
    {"memalign", reinterpret_cast<void*>(&Memalign)},
    {"valloc", reinterpret_cast<void*>(&Valloc)},
    {"pvalloc", reinterpret_cast<void*>(&Pvalloc)},
    {"dlopen", reinterpret_cast<void*>(&Dlopen)},
};

const void* HookNamed(const char* name) {
  for (const Hook& h : kHooks) {
    if (std::strcmp(h.name, name) == 0) return h.hook;
  }
  return nullptr;
}

std::vector<PatchedSlot>* g_patched = nullptr;  // under g_mu; the profiler's memory

// Objects left alone: the profiler's own, libc and the dynamic linker, the vdso.
bool Patches(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base != nullptr ? base + 1 : path;
  return !IsProfilersObject(path) && std::strncmp(base, "libc.so", 7) != 0 &&
         std::strncmp(base, "ld-linux", 8) != 0 && std::strncmp(base, "linux-vdso", 10) != 0;
}

void PatchLoaded() { PatchImportSlots(&Patches, &HookNamed, g_patched); }

void Rescan() {
  NativeGuard patching;  // the patch list's memory is the profiler's
  std::unique_lock<std::recursive_mutex> lock(g_mu, std::try_to_lock);
  if (lock.owns_lock() && g_on) PatchLoaded();
}

void* OpenFromCallersPath(const char* file, int mode, const void* caller) {
  Dl_info info{};
  void* extra = nullptr;
  if (dladdr1(caller, &info, &extra, RTLD_DL_LINKMAP) == 0 || extra == nullptr) return nullptr;
  const auto* object = static_cast<const link_map*>(extra);
  const char* strings = nullptr;
  const char* search = nullptr;
  ElfW(Addr) runpath = 0, rpath = 0;
  for (const ElfW(Dyn)* d = object->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(d->d_un.d_ptr);
    if (d->d_tag == DT_RUNPATH) runpath = d->d_un.d_val;
    if (d->d_tag == DT_RPATH) rpath = d->d_un.d_val;
  }
  if (strings == nullptr || (runpath == 0 && rpath == 0)) return nullptr;
  if (reinterpret_cast<ElfW(Addr)>(strings) < object->l_addr) strings += object->l_addr;
  search = strings + (runpath != 0 ? runpath : rpath);
  std::string origin = object->l_name != nullptr && object->l_name[0] != '\0'
                           ? object->l_name
                           : (info.dli_fname != nullptr ? info.dli_fname : "");
  origin = origin.substr(0, origin.rfind('/'));
  NativeGuard lookup;
  for (const char* at = search; *at != '\0';) {
    const char* end = std::strchr(at, ':');
    std::string dir(at, end != nullptr ? end - at : std::strlen(at));
    for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
      for (size_t p; (p = dir.find(token)) != std::string::npos;) {
        dir.replace(p, std::strlen(token), origin);
      }
    }
    const std::string path = dir + "/" + file;
    if (!dir.empty() && access(path.c_str(), F_OK) == 0) return g_real.dlopen(path.c_str(), mode);
    if (end == nullptr) break;
    at = end + 1;
  }
  return nullptr;
}

template <typename F>
void Resolve(void* handle, F* out, const char* name) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
}

int NoteObject(dl_phdr_info* info, size_t, void* data) {
  auto* objects = static_cast<std::vector<std::pair<std::string, uintptr_t>>*>(data);
  objects->emplace_back(info->dlpi_name != nullptr ? info->dlpi_name : "", info->dlpi_addr);
  return 0;
}

// Where the process's malloc family is: the global scope's definition of malloc, unless
// that is a canonical PLT entry of the program (a program built without -fPIE that takes
// malloc's address has every reference bound to its own stub, which jumps through its
// table: through a hook once patched). Then, the first object in load order (preloaded
// ones come first) that defines malloc itself. Null for none; a handle to dlclose.
void* MallocObject() {
  void* found = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info{};
  void* entry = nullptr;
  if (found != nullptr && dladdr1(found, &info, &entry, RTLD_DL_SYMENT) != 0 &&
      entry != nullptr && static_cast<const ElfW(Sym)*>(entry)->st_shndx != SHN_UNDEF &&
      info.dli_sname != nullptr &&
      std::strcmp(info.dli_sname, "malloc") == 0) {
    return dlopen(nullptr, RTLD_LAZY);  // a definition, wherever it is: the global scope's
  }
  std::vector<std::pair<std::string, uintptr_t>> objects;
  dl_iterate_phdr(&NoteObject, &objects);  // not dlopen inside it: the loader's lock
  for (const auto& [path, base] : objects) {
    if (path.empty()) continue;
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* malloc = dlsym(handle, "malloc");
    if (malloc != nullptr && dladdr(malloc, &info) != 0 &&
        reinterpret_cast<uintptr_t>(info.dli_fbase) == base) {
      return handle;
    }
    dlclose(handle);
  }
  return nullptr;
}

bool PreloadTracks() {
  Dl_info info{};
  void* process_malloc = dlsym(RTLD_DEFAULT, "malloc");
  return process_malloc != nullptr && dladdr(process_malloc, &info) != 0 &&
         info.dli_fname != nullptr && std::strstr(info.dli_fname, "libpaddle_prof_preload") != nullptr;
}

void StopInChild() { g_place.store(-1, std::memory_order_relaxed); }

}  // namespace

std::string StartInProcessNative() {
  NativeGuard profiler_memory;
  std::lock_guard<std::recursive_mutex> lock(g_mu);
  if (g_on) return "";
  if (PreloadTracks()) return "the preload library tracks every malloc already";
  void* allocator = MallocObject();
  if (allocator == nullptr) return "the process's malloc could not be found";
  MallocFamily real{};
  Resolve(allocator, &real.malloc, "malloc");
  Resolve(allocator, &real.free, "free");
  Resolve(allocator, &real.calloc, "calloc");
  Resolve(allocator, &real.realloc, "realloc");
  Resolve(allocator, &real.posix_memalign, "posix_memalign");
  Resolve(allocator, &real.aligned_alloc, "aligned_alloc");
  Resolve(allocator, &real.memalign, "memalign");
  Resolve(allocator, &real.valloc, "valloc");
  Resolve(allocator, &real.pvalloc, "pvalloc");
  Resolve(allocator, &real.malloc_usable_size, "malloc_usable_size");
  dlclose(allocator);  // a reference of our own: the object stays loaded
  // dlopen is libc's: where the global scope finds it, unless that is the program's stub.
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc != nullptr) {
    Resolve(libc, &real.dlopen, "dlopen");
    dlclose(libc);
  }
  for (void* f : {reinterpret_cast<void*>(real.malloc), reinterpret_cast<void*>(real.free),
                  reinterpret_cast<void*>(real.calloc), reinterpret_cast<void*>(real.realloc),
                  reinterpret_cast<void*>(real.posix_memalign),
                  reinterpret_cast<void*>(real.aligned_alloc), reinterpret_cast<void*>(real.memalign),
                  reinterpret_cast<void*>(real.valloc), reinterpret_cast<void*>(real.pvalloc),
                  reinterpret_cast<void*>(real.malloc_usable_size),
                  reinterpret_cast<void*>(real.dlopen)}) {
    if (f == nullptr) return "the process's malloc family could not be found";
  }
  if (!g_fork_handler) g_fork_handler = pthread_atfork(nullptr, nullptr, &StopInChild) == 0;
  g_real = real;
  if (g_patched == nullptr) g_patched = new std::vector<PatchedSlot>();
  const int place = PlaceIndex(NativePlace());
  if (place < 0) return "no room for the native place";
  g_place.store(place, std::memory_order_release);
  g_on = true;
  PatchLoaded();
  return "";
}

void StopInProcessNative() {
  NativeGuard profiler_memory;
  std::lock_guard<std::recursive_mutex> lock(g_mu);
  if (!g_on) return;
  g_on = false;
  const int place = g_place.exchange(-1, std::memory_order_acq_rel);
  RestoreImportSlots(g_patched);
  // Their frees no longer come here: the blocks tracked meanwhile are forgotten.
  std::vector<const void*> tracked;
  LiveBlocks::ForEachAt([place, &tracked](const void* ptr, const LiveBlock& block) {
    if (block.place == place) tracked.push_back(ptr);
  });
  for (const void* ptr : tracked) TrackFree(place, ptr);
}

bool InProcessNativeOn() {
  std::lock_guard<std::recursive_mutex> lock(g_mu);
  return g_on;
}

}  // namespace paddle_prof::internal
