// Files written whole or not at all: a failed write leaves the earlier file as it was.
#include "atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "test_util.h"

namespace paddle_prof::internal {
namespace {

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(AtomicFileTest, ReplacesTheFileOnceComplete) {
  const std::string path = testing::TempPath("atomic_replace");
  std::ofstream(path) << "earlier";
  AtomicFile file(path);
  file.Write("new ");
  EXPECT_EQ(Contents(path), "earlier");  // nothing at the path changes before the commit
  file.Write("contents");
  std::string error;
  ASSERT_TRUE(file.Commit(&error)) << error;
  EXPECT_EQ(Contents(path), "new contents");
  std::remove(path.c_str());
}

TEST(AtomicFileTest, AFailedWriteLeavesTheEarlierFileAndNoTemporary) {
  const std::string path = testing::TempPath("atomic_full");
  std::ofstream(path) << "earlier";
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 4096;  // a full disk, as far as this process can tell
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::string error;
  const bool written = WriteFileAtomically(path, std::string(1 << 20, 'x'), &error);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(written);
  EXPECT_EQ(error, "File too large");
  EXPECT_EQ(Contents(path), "earlier");
  EXPECT_NE(access((path + ".tmp" + std::to_string(getpid())).c_str(), F_OK), 0);
  std::remove(path.c_str());
}

TEST(AtomicFileTest, AMissingDirectoryIsAnErrorThatSaysWhy) {
  std::string error;
  EXPECT_FALSE(WriteFileAtomically("/nonexistent-dir/file.json", "{}", &error));
  EXPECT_EQ(error, "No such file or directory");
}

TEST(AtomicFileTest, AnUncommittedFileLeavesNothingBehind) {
  const std::string path = testing::TempPath("atomic_abandoned");
  {
    AtomicFile file(path);
    file.Write("half");
  }
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  EXPECT_NE(access((path + ".tmp" + std::to_string(getpid())).c_str(), F_OK), 0);
}

TEST(AtomicFileTest, ALinkIsFollowedAndKept) {
  const std::string target = testing::TempPath("atomic_target");
  const std::string link = testing::TempPath("atomic_link");
  std::ofstream(target) << "earlier";
  std::remove(link.c_str());
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(link, "new", &error)) << error;
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Contents(target), "new");
  std::remove(link.c_str());
  std::remove(target.c_str());
}

TEST(AtomicFileTest, ADeviceIsWrittenInPlace) {
  std::string error;
  EXPECT_TRUE(WriteFileAtomically("/dev/null", "{}", &error)) << error;
  const std::string temporary = "/dev/null.tmp" + std::to_string(getpid());
  EXPECT_NE(access(temporary.c_str(), F_OK), 0);  // never renamed over the device
}

TEST(AtomicFileTest, APathHoldingANulIsAnErrorAndWritesNoFileAtItsPrefix) {
  const std::string prefix = testing::TempPath("atomic_nul");
  std::remove(prefix.c_str());
  std::string error;
  EXPECT_FALSE(WriteFileAtomically(prefix + std::string("\0.json", 6), "{}", &error));
  EXPECT_EQ(error, "the path holds a NUL byte");
  EXPECT_NE(access(prefix.c_str(), F_OK), 0);
  EXPECT_NE(access((prefix + ".tmp" + std::to_string(getpid())).c_str(), F_OK), 0);
}

TEST(AtomicFileTest, AFifoWithNoReaderIsAnErrorNotAWait) {
  const std::string path = testing::TempPath("atomic_fifo");
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::string error;
  EXPECT_FALSE(WriteFileAtomically(path, "{}", &error));  // returns at once
  EXPECT_EQ(error, "No such device or address");
  std::remove(path.c_str());
}

TEST(AtomicFileTest, AFifoWithAReaderGetsEveryByte) {
  const std::string path = testing::TempPath("atomic_fifo_read");
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const int reader = open(path.c_str(), O_RDONLY | O_NONBLOCK);  // there before the writer
  ASSERT_GE(reader, 0);
  // More than a pipe holds: the writer must wait for the reader, not fail with EAGAIN.
  const std::string contents(1 << 20, 'x');
  std::string error;
  std::atomic<bool> done{false};
  bool written = false;
  std::thread writer([&] {
    written = WriteFileAtomically(path, contents, &error);
    done = true;
  });
  std::string got;
  char buffer[65536];
  for (;;) {  // until the writer has closed and every byte is read
    const ssize_t n = read(reader, buffer, sizeof(buffer));
    if (n > 0) {
      got.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 && done) {
      break;
    } else {
      std::this_thread::yield();
    }
  }
  writer.join();
  close(reader);
  EXPECT_TRUE(written) << error;
  EXPECT_EQ(got.size(), contents.size());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace paddle_prof::internal
