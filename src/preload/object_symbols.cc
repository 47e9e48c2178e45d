#include "object_symbols.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace paddle_prof::internal {

namespace {

struct DynamicTables {
  const ElfW(Sym) * symbols = nullptr;
  const char* strings = nullptr;
  const uint32_t* gnu_hash = nullptr;
  const uint32_t* sysv_hash = nullptr;  // Elf_Word, 32 bits on every Linux target
  const ElfW(Half) * versions = nullptr;
};

// The dynamic linker relocates these entries in place for most objects, but not for the
// vDSO: an address below the load bias is still an offset.
template <typename T>
const T* Address(const dl_phdr_info& object, ElfW(Addr) value) {
  return reinterpret_cast<const T*>(value < object.dlpi_addr ? value + object.dlpi_addr : value);
}

bool ReadTables(const dl_phdr_info& object, DynamicTables* tables) {
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < object.dlpi_phnum; ++i) {
    if (object.dlpi_phdr[i].p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(object.dlpi_addr + object.dlpi_phdr[i].p_vaddr);
    }
  }
  if (dynamic == nullptr) return false;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        tables->symbols = Address<ElfW(Sym)>(object, d->d_un.d_ptr);
        break;
      case DT_STRTAB:
        tables->strings = Address<char>(object, d->d_un.d_ptr);
        break;
      case DT_GNU_HASH:
        tables->gnu_hash = Address<uint32_t>(object, d->d_un.d_ptr);
        break;
      case DT_HASH:
        tables->sysv_hash = Address<uint32_t>(object, d->d_un.d_ptr);
        break;
      case DT_VERSYM:
        tables->versions = Address<ElfW(Half)>(object, d->d_un.d_ptr);
        break;
    }
  }
  return tables->symbols != nullptr && tables->strings != nullptr &&
         (tables->gnu_hash != nullptr || tables->sysv_hash != nullptr);
}

// A definition of a function under `name`, in its default (or only) version.
bool Defines(const DynamicTables& tables, uint32_t index, const char* name) {
  const ElfW(Sym)& symbol = tables.symbols[index];
  const int type = ELF64_ST_TYPE(symbol.st_info);
  const int binding = ELF64_ST_BIND(symbol.st_info);
  return symbol.st_shndx != SHN_UNDEF && (type == STT_FUNC || type == STT_GNU_IFUNC) &&
         (binding == STB_GLOBAL || binding == STB_WEAK) &&
         (tables.versions == nullptr || (tables.versions[index] & 0x8000) == 0) &&
         std::strcmp(tables.strings + symbol.st_name, name) == 0;
}

const ElfW(Sym) * FindInGnuHash(const DynamicTables& tables, const char* name) {
  uint32_t hash = 5381;
  for (const char* c = name; *c != '\0'; ++c) hash = hash * 33 + static_cast<unsigned char>(*c);
  const uint32_t* table = tables.gnu_hash;
  const uint32_t bucket_count = table[0], first_hashed = table[1], bloom_words = table[2];
  const auto* buckets = reinterpret_cast<const uint32_t*>(
      reinterpret_cast<const ElfW(Addr)*>(table + 4) + bloom_words);
  const uint32_t* chain = buckets + bucket_count;
  for (uint32_t index = buckets[hash % bucket_count]; index >= first_hashed && index != 0;
       ++index) {
    const uint32_t entry = chain[index - first_hashed];
    if ((entry | 1) == (hash | 1) && Defines(tables, index, name)) return &tables.symbols[index];
    if ((entry & 1) != 0) break;  // the bucket's last entry
  }
  return nullptr;
}

const ElfW(Sym) * FindInSysvHash(const DynamicTables& tables, const char* name) {
  uint32_t hash = 0;
  for (const char* c = name; *c != '\0'; ++c) {
    hash = (hash << 4) + static_cast<unsigned char>(*c);
    const uint32_t high = hash & 0xf0000000;
    if (high != 0) hash ^= high >> 24;
    hash &= ~high;
  }
  const uint32_t* table = tables.sysv_hash;
  const uint32_t bucket_count = table[0];
  const uint32_t* buckets = table + 2;
  const uint32_t* chain = buckets + bucket_count;
  for (uint32_t index = buckets[hash % bucket_count]; index != STN_UNDEF; index = chain[index]) {
    if (Defines(tables, index, name)) return &tables.symbols[index];
  }
  return nullptr;
}

}  // namespace

void* DefinedFunction(const dl_phdr_info& object, const char* name) {
  DynamicTables tables;
  if (!ReadTables(object, &tables)) return nullptr;
  const ElfW(Sym)* symbol =
      tables.gnu_hash != nullptr ? FindInGnuHash(tables, name) : FindInSysvHash(tables, name);
  if (symbol == nullptr) return nullptr;
  void* address = reinterpret_cast<void*>(object.dlpi_addr + symbol->st_value);
  if (ELF64_ST_TYPE(symbol->st_info) == STT_GNU_IFUNC) {
    address = reinterpret_cast<void* (*)()>(address)();  // as the dynamic linker does
  }
  return address;
}

bool ObjectContains(const dl_phdr_info& object, const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  for (int i = 0; i < object.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = object.dlpi_phdr[i];
    const uintptr_t start = object.dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && at >= start && at - start < segment.p_memsz) return true;
  }
  return false;
}

}  // namespace paddle_prof::internal
