// The import slots of the loaded ELF objects (their GOT entries, R_*_JUMP_SLOT and
// R_*_GLOB_DAT), pointed at hooks by symbol name: how a library takes over calls other
// objects make through their dynamic symbol tables without a preload or a restart, as
// memray does for the malloc family. An entry's page is made writable just for the store
// where the object's relocations are read-only once done (RELRO). A call an object makes
// to its own function without its table (a hidden or -Bsymbolic one) is not seen.
#ifndef PADDLE_PROF_SRC_IMPORT_SLOTS_H_
#define PADDLE_PROF_SRC_IMPORT_SLOTS_H_

#include <cstdint>
#include <vector>

namespace paddle_prof::internal {

// One entry pointed at a hook: where, what it held, the base of the object it is in,
// and whether its page is read-only but for the store.
struct PatchedSlot {
  void** slot;
  void* original;
  uintptr_t object;
  bool read_only;
};

// Whether the object at `path` ("" for the program) is to be patched; the hook for the
// symbol `name`, or null to leave its entries alone.
using PatchesObject = bool (*)(const char* path);
using HookFor = const void* (*)(const char* name);

// Whether the object at `path` is paddle_prof's own (its library, its preload library, the
// Python package's extensions), whose calls are the profiler's: by file name, since a
// folder named paddle_prof may hold anything (a virtual environment in a cache).
bool IsProfilersObject(const char* path);

// Points every entry of the loaded objects `patches` accepts whose symbol has a hook at
// that hook, appending each change to `patched`. An entry that holds its hook already is
// left as it is. Call with the caller's own lock held: not thread-safe against itself.
void PatchImportSlots(PatchesObject patches, HookFor hook_for, std::vector<PatchedSlot>* patched);

// Puts the entries of `patched` back, newest first, in the objects still loaded (one
// unloaded meanwhile may have left its address to another), and empties it.
void RestoreImportSlots(std::vector<PatchedSlot>* patched);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_IMPORT_SLOTS_H_
