#include "name_interner.h"

#include <cstring>
#include <mutex>

namespace paddle_prof::internal {

namespace {

constexpr char kInternedNul[] = "\xC0\x80";

}  // namespace

const char* InternShared(std::string_view s, std::string_view* key) {
  static std::mutex* mu = new std::mutex;  // leaked: threads may intern during exit
  // The caller's bytes -> their interned form, when it differs (empty otherwise).
  static auto* table = new std::unordered_map<std::string, std::string>;
  std::lock_guard<std::mutex> lock(*mu);
  const auto [it, added] = table->try_emplace(std::string(s));  // node-based: never moves
  if (added && s.find('\0') != std::string_view::npos) {
    for (const char c : s) {
      if (c == '\0') {
        it->second.append(kInternedNul);
      } else {
        it->second.push_back(c);
      }
    }
  }
  *key = it->first;
  return it->second.empty() ? it->first.c_str() : it->second.c_str();
}

std::string NameBytes(const char* name) {
  std::string bytes = name;
  for (size_t at = bytes.find(kInternedNul); at != std::string::npos;
       at = bytes.find(kInternedNul, at + 1)) {
    bytes.replace(at, 2, 1, '\0');
  }
  return bytes;
}

}  // namespace paddle_prof::internal
