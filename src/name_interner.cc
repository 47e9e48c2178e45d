#include "name_interner.h"

#include <mutex>
#include <string>
#include <unordered_set>

namespace paddle_prof::internal {

const char* InternShared(std::string_view s) {
  static std::mutex* mu = new std::mutex;  // leaked: threads may intern during exit
  static auto* table = new std::unordered_set<std::string>;
  std::lock_guard<std::mutex> lock(*mu);
  return table->emplace(s).first->c_str();  // node-based: c_str() never moves
}

}  // namespace paddle_prof::internal
