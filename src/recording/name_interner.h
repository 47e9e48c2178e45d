// Interned strings: dynamic event names and tags become `const char*` that a record can
// hold instead of a copy.
//
// Each NameCache owns the strings it interned: there is no shared table and no lock
// (nothing a child forked mid-intern could find held). A thread's recorder has its own
// cache, and only its owner thread interns into it or frees from it; the CUPTI record
// reader keeps two, the capture being read and the one taken last. The same name on
// two threads is two copies; the report merges rows by their text.
//
// Memory stays bounded across windows because a recorder frees its names when its thread
// first acts in a new window (ThreadRecorder::StartWindow), keeping only those its open
// scopes hold. That is safe without any handshake, because of who reads a name:
//   - records: only the collector of their own window reads them, and a thread sees a
//     newer window only after that collector is done (the window's release store in
//     OpenWindow, the thread's acquire load);
//   - live blocks: a block's name is read only while the block's window is the open one
//     (collected as a live block, or as the owner of a free in that window); a thread
//     writes a block or a record of a window only after it has started that window;
//   - open scopes: a scope that stays open across windows keeps its name (it is on the
//     stack when the new window starts), so later records and blocks can name it; a cut
//     record (a scope begun before the window) carries no name;
//   - the thread's cache: emptied by the owner itself; a pointer it returns is used at
//     once for a scope of the window it was interned for.
// A recorder whose thread exited has its names freed when the next window opens
// (RecorderRegistry::ReleaseRetiredNames). A live thread that stops making dynamic
// names keeps those of its last window until it next acts in a later one.
//
// While a window captures (capture_files.h), each string is also logged as it is first
// copied, so that recovery can name records of a process that is gone.
//
// Records hold C strings, yet a name may contain NUL bytes (RecordEvent(std::string)
// takes any bytes, Python's str may hold '\0'): an interned string stores each NUL as
// C0 80 (as Java's "modified UTF-8" does), which no valid UTF-8 contains, so "a\0b" and
// "a\0c" stay apart. NameBytes() turns it back; the JSON writer and the text table read
// C0 80 as NUL (text_escape.h).
#ifndef PADDLE_PROF_SRC_NAME_INTERNER_H_
#define PADDLE_PROF_SRC_NAME_INTERNER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "own_arena.h"

namespace paddle_prof::internal {

// The bytes a recorded name (interned or not) stands for: C0 80 read as NUL.
std::string NameBytes(const char* name);

// Strings held by all caches, and the bytes of those copies (the caches' own tables
// come on top): for tests and benchmarks.
int64_t InternedNames();
int64_t InternedBytes();

class NameCache {
 public:
  NameCache() : names_(0, std::hash<std::string_view>(), std::equal_to<>(), Allocator(&arena_)) {}
  NameCache(const NameCache&) = delete;
  NameCache& operator=(const NameCache&) = delete;
  ~NameCache() { ReleaseAllBut(nullptr, 0); }

  // `s`, NUL-free, valid until released. Lock-free and allocation-free once `s` is here.
  const char* Intern(std::string_view s) {
    const auto it = names_.find(s);
    return it != names_.end() ? it->second : Add(s);
  }

  // Frees every string but the `count` ones in `keep` (sorted by address; other
  // pointers in it, literals say, are ignored). Owner only.
  void ReleaseAllBut(const char* const* keep, size_t count);

  bool empty() const { return names_.empty(); }
  // Calls `f(interned)` for each string held (a capture logs those kept from before).
  template <class F>
  void ForEach(F f) const {
    for (const auto& entry : names_) f(entry.second);
  }

 private:
  const char* Add(std::string_view s);

  using Allocator = ArenaAllocator<std::pair<const std::string_view, const char*>>;
  using Names = std::unordered_map<std::string_view, const char*, std::hash<std::string_view>,
                                   std::equal_to<>, Allocator>;
  // The entries and the table's nodes: names are kept as the program runs, and new
  // ones come with new shapes, step after step (own_arena.h).
  OwnArena arena_;
  // The caller's bytes (a copy inside the entry) -> the interned string, which starts
  // the entry's one allocation.
  Names names_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_NAME_INTERNER_H_
