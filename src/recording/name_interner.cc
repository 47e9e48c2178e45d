#include "name_interner.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>

#include "capture_files.h"
#include "native_guard.h"

namespace paddle_prof::internal {

namespace {

constexpr char kInternedNul[] = "\xC0\x80";

std::atomic<int64_t> g_names{0};
std::atomic<int64_t> g_bytes{0};

// The size of an entry for `s`: the interned string, and after it a copy of `s` when the
// two differ.
size_t EntryBytes(std::string_view s, size_t* interned_size) {
  const size_t nuls = static_cast<size_t>(std::count(s.begin(), s.end(), '\0'));
  *interned_size = s.size() + nuls;  // each NUL takes two bytes
  return *interned_size + 1 + (nuls > 0 ? s.size() : 0);
}

}  // namespace

std::string NameBytes(const char* name) {
  std::string bytes = name;
  for (size_t at = bytes.find(kInternedNul); at != std::string::npos;
       at = bytes.find(kInternedNul, at + 1)) {
    bytes.replace(at, 2, 1, '\0');
  }
  return bytes;
}

int64_t InternedNames() { return g_names.load(std::memory_order_relaxed); }
int64_t InternedBytes() { return g_bytes.load(std::memory_order_relaxed); }

const char* NameCache::Add(std::string_view s) {
  NativeGuard profiler_memory;
  size_t interned_size;
  const size_t bytes = EntryBytes(s, &interned_size);
  char* entry = static_cast<char*>(arena_.Allocate(bytes));
  char* out = entry;
  for (const char c : s) {
    if (c == '\0') {
      std::memcpy(out, kInternedNul, 2);
      out += 2;
    } else {
      *out++ = c;
    }
  }
  *out++ = '\0';
  // The key is the caller's bytes: the interned string itself when it has no NUL.
  const char* key = entry;
  if (interned_size != s.size()) {
    std::memcpy(out, s.data(), s.size());
    key = out;
  }
  names_.emplace(std::string_view(key, s.size()), entry);
  g_names.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  LogCapturedName(entry);
  return entry;
}

void NameCache::ReleaseAllBut(const char* const* keep, size_t count) {
  if (names_.empty()) return;
  NativeGuard profiler_memory;
  // Rebuilt rather than erased from: a table that held a million names must not keep
  // its buckets.
  Names kept(0, std::hash<std::string_view>(), std::equal_to<>(), Allocator(&arena_));
  int64_t names = 0, bytes = 0;
  for (const auto& [key, interned] : names_) {
    if (std::binary_search(keep, keep + count, interned, std::less<const char*>())) {
      kept.emplace(key, interned);
      continue;
    }
    size_t interned_size;
    const size_t entry_bytes = EntryBytes(key, &interned_size);
    bytes += static_cast<int64_t>(entry_bytes);
    ++names;
    arena_.Free(const_cast<char*>(interned), entry_bytes);
  }
  names_.swap(kept);
  g_names.fetch_sub(names, std::memory_order_relaxed);
  g_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

}  // namespace paddle_prof::internal
