#include "import_slots.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <utility>

namespace paddle_prof::internal {
namespace {

// The dynamic section's addresses: glibc rewrites them to absolute ones as it loads an
// object; some other loaders leave them relative to the object's base.
template <typename T>
T* At(const dl_phdr_info* info, ElfW(Addr) value) {
  return reinterpret_cast<T*>(value < info->dlpi_addr ? info->dlpi_addr + value : value);
}

void Store(void** slot, void* value, bool read_only) {
  const auto size = static_cast<uintptr_t>(getpagesize());
  void* page = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(slot) & ~(size - 1));
  if (read_only) mprotect(page, size, PROT_READ | PROT_WRITE);
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  if (read_only) mprotect(page, size, PROT_READ);
}

bool InRelro(const dl_phdr_info* info, const void* slot) {
  const auto at = reinterpret_cast<uintptr_t>(slot);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_GNU_RELRO) continue;
    const uintptr_t start = info->dlpi_addr + p.p_vaddr;
    if (at >= start && at < start + p.p_memsz) return true;
  }
  return false;
}

struct Patching {
  PatchesObject patches;
  HookFor hook_for;
  std::vector<PatchedSlot>* patched;
};

void PatchRelocations(const dl_phdr_info* info, const ElfW(Rela)* relocations, size_t bytes,
                      const ElfW(Sym)* symbols, const char* strings, const Patching& p) {
  if (relocations == nullptr || symbols == nullptr || strings == nullptr) return;
  for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    const ElfW(Rela)& r = relocations[i];
    const auto type = ELF64_R_TYPE(r.r_info);
#if defined(__x86_64__)
    if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
#elif defined(__aarch64__)
    if (type != R_AARCH64_JUMP_SLOT && type != R_AARCH64_GLOB_DAT) continue;
#endif
    const ElfW(Sym)& symbol = symbols[ELF64_R_SYM(r.r_info)];
    const void* hook = p.hook_for(strings + symbol.st_name);
    if (hook == nullptr) continue;
    auto** slot = reinterpret_cast<void**>(info->dlpi_addr + r.r_offset);
    void* held = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (held == hook) continue;  // patched already
    const bool read_only = InRelro(info, slot);
    p.patched->push_back({slot, held, info->dlpi_addr, read_only});
    Store(slot, const_cast<void*>(hook), read_only);
  }
}

int PatchObject(dl_phdr_info* info, size_t, void* data) {
  const Patching& p = *static_cast<const Patching*>(data);
  if (!p.patches(info->dlpi_name != nullptr ? info->dlpi_name : "")) return 0;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    }
  }
  if (dynamic == nullptr) return 0;
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const ElfW(Rela)* plt = nullptr;
  const ElfW(Rela)* rela = nullptr;
  size_t plt_bytes = 0, rela_bytes = 0;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symbols = At<const ElfW(Sym)>(info, d->d_un.d_ptr); break;
      case DT_STRTAB: strings = At<const char>(info, d->d_un.d_ptr); break;
      case DT_JMPREL: plt = At<const ElfW(Rela)>(info, d->d_un.d_ptr); break;
      case DT_PLTRELSZ: plt_bytes = d->d_un.d_val; break;
      case DT_RELA: rela = At<const ElfW(Rela)>(info, d->d_un.d_ptr); break;
      case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
      default: break;
    }
  }
  PatchRelocations(info, plt, plt_bytes, symbols, strings, p);
  PatchRelocations(info, rela, rela_bytes, symbols, strings, p);
  return 0;
}

int NoteBase(dl_phdr_info* info, size_t, void* data) {
  static_cast<std::vector<uintptr_t>*>(data)->push_back(info->dlpi_addr);
  return 0;
}

}  // namespace

bool IsProfilersObject(const char* path) {
  const char* slash = std::strrchr(path, '/');
  const char* base = slash != nullptr ? slash + 1 : path;
  if (std::strncmp(base, "libpaddle_prof", 14) == 0) return true;
  // paddle_prof/_core.*.so, _torch_bridge, _paddle_bridge: an extension in the package.
  constexpr char kPackage[] = "paddle_prof/";
  constexpr size_t kLength = sizeof(kPackage) - 1;
  const size_t folder_at = static_cast<size_t>(base - path);
  return base[0] == '_' && folder_at >= kLength &&
         std::strncmp(base - kLength, kPackage, kLength) == 0 &&
         (folder_at == kLength || *(base - kLength - 1) == '/');
}

void PatchImportSlots(PatchesObject patches, HookFor hook_for, std::vector<PatchedSlot>* patched) {
  Patching p{patches, hook_for, patched};
  dl_iterate_phdr(&PatchObject, &p);
}

void RestoreImportSlots(std::vector<PatchedSlot>* patched) {
  std::vector<uintptr_t> loaded;
  dl_iterate_phdr(&NoteBase, &loaded);
  for (auto p = patched->rbegin(); p != patched->rend(); ++p) {
    bool still = false;
    for (const uintptr_t base : loaded) still = still || base == p->object;
    if (!still) continue;
    if (__atomic_load_n(p->slot, __ATOMIC_ACQUIRE) != p->original) {
      Store(p->slot, p->original, p->read_only);
    }
  }
  patched->clear();
}

}  // namespace paddle_prof::internal
