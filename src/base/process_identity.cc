#include "process_identity.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <optional>

namespace paddle_prof::internal {

namespace {

std::optional<int> IntFromEnvironment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value > INT_MAX) return std::nullopt;
  return static_cast<int>(value);
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

void ReplaceAll(std::string* s, const std::string& field, const std::string& value) {
  for (size_t at = s->find(field); at != std::string::npos;
       at = s->find(field, at + value.size())) {
    s->replace(at, field.size(), value);
  }
}

}  // namespace

ProcessInfo ThisProcess() {
  ProcessInfo p;
  p.pid = getpid();
  p.host = HostName();
  std::optional<int> rank = IntFromEnvironment("RANK");
  std::optional<int> world_size = IntFromEnvironment("WORLD_SIZE");
  if (!rank || !world_size) {  // as PaddlePaddle's launcher and spawn name them
    rank = IntFromEnvironment("PADDLE_TRAINER_ID");
    world_size = IntFromEnvironment("PADDLE_TRAINERS_NUM");
  }
  if (rank && world_size && *rank < *world_size) {
    p.rank = rank;
    p.world_size = world_size;
  }
  return p;
}

int64_t RealtimeNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

std::string ExpandPathFields(const std::string& path, const ProcessInfo& process) {
  if (path.find('{') == std::string::npos) return path;
  std::string expanded = path;
  ReplaceAll(&expanded, "{rank}", std::to_string(process.rank.value_or(0)));
  ReplaceAll(&expanded, "{pid}", std::to_string(process.pid));
  ReplaceAll(&expanded, "{host}", process.host);
  return expanded;
}

}  // namespace paddle_prof::internal
