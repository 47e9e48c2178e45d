// Interned strings: dynamic event names and tags become stable `const char*` that
// live for the whole process, so a record can hold a pointer instead of a copy.
// Each thread keeps a cache in front of the shared table; only a thread's first use
// of a string takes the lock.
#ifndef PADDLE_PROF_SRC_NAME_INTERNER_H_
#define PADDLE_PROF_SRC_NAME_INTERNER_H_

#include <string_view>
#include <unordered_map>

#include "native_guard.h"

namespace paddle_prof::internal {

// The shared table: locks, copies the string on first sight.
const char* InternShared(std::string_view s);

// A per-thread front: lock-free and allocation-free once a string has been seen.
class NameCache {
 public:
  const char* Intern(std::string_view s) {
    auto it = cache_.find(s);
    if (it != cache_.end()) return it->second;
    NativeGuard profiler_memory;
    const char* interned = InternShared(s);
    cache_.emplace(std::string_view(interned, s.size()), interned);
    return interned;
  }

 private:
  std::unordered_map<std::string_view, const char*> cache_;  // keys point into the table
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_NAME_INTERNER_H_
