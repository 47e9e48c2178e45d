#include "call_stacks.h"

#include <deque>
#include <map>
#include <mutex>
#include <utility>

#include "native_stacks.h"

namespace paddle_prof::internal {

namespace {

struct Stacks {
  std::mutex mu;
  StackCapture capture = nullptr;
  bool recording = false;  // the open window records stacks (Python's, native ones or both)
  std::deque<CallStack> by_id;  // id - 1; a deque keeps each stack in place
  std::map<std::vector<std::string>, uint32_t> ids;
};

Stacks& GetStacks() {
  static auto* stacks = new Stacks;  // leaked: calls may begin during exit
  return *stacks;
}

}  // namespace

void RegisterStackCapture(StackCapture capture) {
  Stacks& s = GetStacks();
  std::lock_guard<std::mutex> lock(s.mu);
  s.capture = capture;
}

void RecordStacks(bool on) {
  Stacks& s = GetStacks();
  std::lock_guard<std::mutex> lock(s.mu);
  g_stack_capture.store(on ? s.capture : nullptr, std::memory_order_relaxed);
  const bool native = CaptureNativeStacks(on);
  s.recording = s.capture != nullptr ? on : native;
}

bool RecordingStacks() {
  Stacks& s = GetStacks();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.recording;
}

void LockCallStacksForFork() { GetStacks().mu.lock(); }
void UnlockCallStacksAfterFork() { GetStacks().mu.unlock(); }

uint32_t InternCallStack(CallStack stack) {
  Stacks& s = GetStacks();
  std::lock_guard<std::mutex> lock(s.mu);
  const auto [it, added] = s.ids.try_emplace(stack.frames, static_cast<uint32_t>(s.by_id.size() + 1));
  if (added) s.by_id.push_back(std::move(stack));
  return it->second;
}

const CallStack* CallStackOf(uint32_t id) {
  Stacks& s = GetStacks();
  std::lock_guard<std::mutex> lock(s.mu);
  return id >= 1 && id <= s.by_id.size() ? &s.by_id[id - 1] : nullptr;
}

}  // namespace paddle_prof::internal
