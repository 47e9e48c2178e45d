// The files of a capture (capture_dir): where a window's records go as they are made, so
// that a process killed without stopping its profiler (SIGKILL, the OOM killer) leaves
// them behind for recovery (capture_reader.h). Every file in the directory starts with
// kCapturePrefix; a window that stops normally removes them all.
//   pp_capture.meta                the window: id, pid, state, start tick, clock rate,
//                                  places (rewritten whole at open and at each step mark)
//   pp_capture.steps               one line per step mark: its tick (appended)
//   pp_capture.maps                /proc/self/maps at open and at each step mark: where
//                                  literal names live (a name pointer -> file, offset)
//   pp_capture.names               interned names as they are made: pointer, length,
//                                  bytes (appended, on NameCache's slow path only)
//   pp_capture.places              places registered while the capture is open: one
//                                  line each, "index name" (appended)
//   pp_capture.w<W>.t<I>.info      recorder I in window W: its thread id and name
//   pp_capture.w<W>.t<I>.c<K>      its chunk K: EventBuffer::kChunkBytes of records,
//                                  mapped shared, zero where nothing was written yet
//                                  (a reset renames it for the next window, whose
//                                  recorder zeroes it as it takes it up again)
// The recording side is here (the recorders map chunks and log names through it); the
// window control writes the rest.
#ifndef PADDLE_PROF_SRC_CAPTURE_FILES_H_
#define PADDLE_PROF_SRC_CAPTURE_FILES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace paddle_prof::internal {

struct EventRecord;

inline constexpr char kCapturePrefix[] = "pp_capture.";
// The first line of pp_capture.meta: the format and its version, which the window control
// writes (capture_control.cc) and recovery checks (capture_reader.cc).
inline constexpr char kCaptureMetaMagic[] = "paddle_prof capture 1\n";

std::string CaptureFile(const std::string& dir, std::string_view name);
// The prefix of recorder `index`'s chunk files in `window`; the chunk number follows.
std::string CaptureChunkPrefix(const std::string& dir, uint64_t window, int index);
std::string CaptureThreadFile(const std::string& dir, uint64_t window, int index);

// A zero-filled chunk of `bytes` mapped shared from a new file at `path` (its blocks
// reserved, so that a full disk fails here rather than as SIGBUS on a write); nullptr
// when that fails.
EventRecord* MapCaptureChunk(const std::string& path, size_t bytes);
// Recorder `index`'s thread, for recovery; false when the file cannot be written.
bool WriteCaptureThread(const std::string& dir, uint64_t window, int index, int os_tid,
                        const std::string& name);

// The interned-name and place logs: opened (emptied) by the window control as a capture
// starts, closed as it ends. LogCapturedName appends one interned string while they are
// open; it takes a lock, and is called only where a name is first copied.
// LogCapturedPlace appends a place registered after the meta was written, so that
// recovery names it as the window did; it takes the same lock.
bool OpenCaptureNames(const std::string& dir, std::string* error);
void CloseCaptureNames();
void LogCapturedName(const char* interned);
void LogCapturedPlace(int index, const std::string& name);
void LockCaptureNamesForFork();
void UnlockCaptureNamesAfterFork();

// Removes the capture files in `dir` (files of other names stay); with `keep_chunks`,
// all but the recorders' chunks, which recorders rename for a next window in `dir`.
void RemoveCaptureFiles(const std::string& dir, bool keep_chunks = false);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CAPTURE_FILES_H_
