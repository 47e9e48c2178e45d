// Where memory comes from: the call path of an allocation, the events open on its
// thread when it was made, outermost first. Rebuilt when the report is built, from the
// thread's call records (each call's start, end and depth; children end before their
// parent) and the collecting thread's still-open scopes, so that recording pays nothing
// for it: the innermost call open at a tick is found by a binary search over the calls'
// starts and a walk up its parents.
//
// Paths are interned: a path id names one sequence of event names, so blocks are grouped
// by integers and turned into names once per distinct path.
#ifndef PADDLE_PROF_SRC_CALL_PATHS_H_
#define PADDLE_PROF_SRC_CALL_PATHS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collection.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

class CallPaths {
 public:
  static constexpr int kEmpty = 0;  // no event open

  explicit CallPaths(const Collection& c) : c_(c) {}

  // Where a block that `owner` allocated on `thread` at `tick` came from: its path,
  // which ends with `owner` (appended when the innermost call found is not it: a call
  // still open on another thread, or not recorded; kEmpty for kNoEventName,
  // kBeforeWindowName), and with record_stacks, the source frame of the top-level call
  // around it (null for none).
  struct Origin {
    int path = kEmpty;
    const std::string* source = nullptr;
  };
  Origin OriginOf(int thread, uint64_t tick, const char* owner);
  // Whether `owner` names no event (null, kNoEventName, kBeforeWindowName): its blocks'
  // path is kEmpty wherever they came from.
  static bool NoEvent(const char* owner);
  int PathOf(int thread, uint64_t tick, const char* owner) {
    return OriginOf(thread, tick, owner).path;
  }

  // The source frame of a top-level call's stack (call_stacks.h), null for none.
  static const std::string* SourceOfStack(uint32_t stack);

  // The event names of `path`, outermost first.
  std::vector<std::string> Names(int path) const;

 private:
  struct Call {
    uint64_t start;
    uint64_t end;
    const char* name;  // null for a call cut by a reset: it names nothing
    int32_t parent;    // index in the thread's calls, -1 for none
    int32_t path;      // its path id, -1 until asked
    int32_t root;      // its top-level ancestor (or itself), once `path` is known
    const std::string* source;  // a top-level call's source frame, or null
  };
  // A thread's calls, read from its records as far as the ticks asked for need.
  struct Thread {
    std::unique_ptr<RecordCursor> cursor;
    bool read_all = false;
    uint64_t read_past = 0;  // every call begun before this tick is read
    std::vector<Call> calls;
    std::vector<int32_t> by_start;  // call indices, by start (deeper ones later on ties)
    std::vector<std::vector<int32_t>> waiting;  // by depth: calls whose parent is unread
  };
  struct Step {
    int parent;
    const char* name;
  };

  int Child(int path, const char* name);
  int PathOfCall(Thread& thread, int32_t call);
  // The thread's calls, with every call begun by `tick` among them; null for no such
  // thread.
  Thread* ThreadAt(int index, uint64_t tick);
  // The innermost call of thread `index` open at `tick` (-1 for none), and the thread.
  int32_t InnermostCall(int index, uint64_t tick, Thread** found);
  void ReadCalls(int index, uint64_t tick, Thread* thread);

  const Collection& c_;
  std::unordered_map<int, Thread> threads_;
  std::vector<Step> steps_{{-1, nullptr}};  // by path id; 0 is kEmpty
  std::map<std::pair<int, const char*>, int> children_;
  std::vector<int32_t> chain_;  // PathOfCall's, reused
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CALL_PATHS_H_
