// Interned strings: dynamic event names and tags become stable `const char*` that
// live for the whole process, so a record can hold a pointer instead of a copy.
// Each thread keeps a cache in front of the shared table; only a thread's first use
// of a string takes the lock.
//
// Records hold C strings, yet a name may contain NUL bytes (RecordEvent(std::string)
// takes any bytes, Python's str may hold '\0'): an interned string stores each NUL as
// C0 80 (as Java's "modified UTF-8" does), which no valid UTF-8 contains, so "a\0b" and
// "a\0c" stay apart. NameBytes() turns it back; the JSON writer and the text table read
// C0 80 as NUL (text_escape.h).
#ifndef PADDLE_PROF_SRC_NAME_INTERNER_H_
#define PADDLE_PROF_SRC_NAME_INTERNER_H_

#include <string>
#include <string_view>
#include <unordered_map>

#include "native_guard.h"

namespace paddle_prof::internal {

// The shared table: locks, copies the string on first sight. `*key` is set to a copy of
// `s` that lives as long as the returned string.
const char* InternShared(std::string_view s, std::string_view* key);

// The bytes a recorded name (interned or not) stands for: C0 80 read as NUL.
std::string NameBytes(const char* name);

// A per-thread front: lock-free and allocation-free once a string has been seen.
class NameCache {
 public:
  const char* Intern(std::string_view s) {
    auto it = cache_.find(s);
    if (it != cache_.end()) return it->second;
    NativeGuard profiler_memory;
    std::string_view key;
    const char* interned = InternShared(s, &key);
    cache_.emplace(key, interned);
    return interned;
  }

 private:
  // Keys are the caller's bytes, pointing into the table.
  std::unordered_map<std::string_view, const char*> cache_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_NAME_INTERNER_H_
