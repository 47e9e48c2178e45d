// A file written whole or not at all. The bytes go to a temporary file beside `path`
// (the same directory, so the rename never crosses file systems), which replaces `path`
// only once every byte is written and the file is closed. A full disk, a write error or
// a process killed mid-write leaves whatever was at `path` before as it was (a kill
// may leave the temporary, `<path>.tmp<pid>`, behind). A symbolic link is followed: the
// file it leads to is replaced, the link stays. A path that names something other than
// a regular file (/dev/stdout, a FIFO) is written in place: there is nothing to rename
// over; a FIFO with no reader is an error, never a wait. A path holding a NUL byte is an
// error too (the system would read it only up to the NUL). No fsync: the file is whole
// once renamed, not necessarily on disk.
//
//   AtomicFile file(path);
//   file.Write(json);
//   std::string error;
//   if (!file.Commit(&error)) LOG(ERROR) << path << ": " << error;
#ifndef PADDLE_PROF_SRC_ATOMIC_FILE_H_
#define PADDLE_PROF_SRC_ATOMIC_FILE_H_

#include <cstdio>
#include <string>
#include <string_view>

namespace paddle_prof::internal {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // not committed: the temporary is removed

  // Appends; after the first failure nothing more is written and Commit() fails.
  void Write(std::string_view bytes);
  // Closes the file and puts it at `path`; false, with the reason in `error`, when any
  // step failed (then nothing at `path` has changed).
  bool Commit(std::string* error);

 private:
  void Fail();  // keeps the first error
  static constexpr int kNulInPath = -1;  // error_ for a path holding a NUL byte

  std::string path_;
  std::string temp_;  // empty when written in place
  FILE* file_ = nullptr;
  int error_ = 0;  // errno of the first failure, or kNulInPath
};

// The whole of `contents` at `path`, as above.
bool WriteFileAtomically(const std::string& path, std::string_view contents, std::string* error);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_ATOMIC_FILE_H_
