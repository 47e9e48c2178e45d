// Files written whole or not at all: a failed write leaves the earlier file as it was.
#include "atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

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

}  // namespace
}  // namespace paddle_prof::internal
