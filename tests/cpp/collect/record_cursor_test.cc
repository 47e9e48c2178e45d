// The one reader of a thread's records, on hand-made buffers: each call with the memory
// figures and GPU scope id after it, each allocation and free, and what Kept() keeps.
#include "record_cursor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "collection.h"
#include "event_buffer.h"
#include "event_record.h"
#include "scope_memory.h"
#include "test_util.h"

namespace paddle_prof::internal {
namespace {

using paddle_prof::testing::Memory;

struct Buffer {
  std::unique_ptr<EventBuffer> buffer = std::make_unique<EventBuffer>();

  void Add(const EventRecord& r) { ASSERT_TRUE(buffer->Append(r)); }
  void AddMemory(int place, const MemoryStats& stats) {
    EventRecord pair[2];
    ScopeMemoryRecord{place, stats}.Encode(pair);
    Add(pair[0]);
    Add(pair[1]);
  }
  ThreadSnapshot Snapshot() const {
    ThreadSnapshot t;
    t.buffer = buffer.get();
    t.size = buffer->Size();
    return t;
  }
};

TEST(RecordCursorTest, AFreeSaysWhereItsBlockCameFromAndACallItsStackAndOpDetails) {
  Buffer b;
  b.Add(EventRecord::Memory(RecordKind::kAlloc, 0, "op", nullptr, 5, 64));
  b.Add(EventRecord::FreeOrigin(3, 1));  // stray: no free before it, read by nothing
  b.Add(EventRecord::Call("op", nullptr, 0, false, 4, 9));
  b.AddMemory(0, Memory(64, 64, 1, 0, 0));
  b.Add(EventRecord::Stack(12));
  b.Add(EventRecord::OpDetail("[[[4]], [\"float\"]]", 42, 3, 2));
  b.Add(EventRecord::Memory(RecordKind::kFree, 0, "op", nullptr, 11, 64));
  b.Add(EventRecord::FreeOrigin(7, 5));
  b.Add(EventRecord::Memory(RecordKind::kFree, 0, "[before profiling]", nullptr, 13, 8));

  const ThreadSnapshot t = b.Snapshot();
  RecordCursor calls(t);
  ASSERT_TRUE(calls.NextCall());
  EXPECT_EQ(calls.call().places, 1);
  EXPECT_EQ(calls.call().stack, 12u);
  EXPECT_EQ(calls.call().sequence, 41);
  EXPECT_EQ(calls.call().forward_thread, 3u);
  EXPECT_EQ(calls.call().torch_thread, 2u);
  EXPECT_STREQ(calls.call().inputs, "[[[4]], [\"float\"]]");
  EXPECT_FALSE(calls.NextCall());  // the frees and their origins are no calls

  RecordCursor records(t);
  MemoryEvent e;
  ASSERT_TRUE(records.NextMemoryEvent(&e));
  EXPECT_EQ(e.alloc_tick, 5u);  // an allocation's own
  ASSERT_TRUE(records.NextMemoryEvent(&e));
  EXPECT_EQ(e.delta, -64);
  EXPECT_EQ(e.alloc_thread, 7);
  EXPECT_EQ(e.alloc_tick, 5u);
  ASSERT_TRUE(records.NextMemoryEvent(&e));
  EXPECT_EQ(e.delta, -8);
  EXPECT_EQ(e.alloc_thread, -1);  // no origin record: unknown, not the last free's
  EXPECT_EQ(e.alloc_tick, 0u);
  EXPECT_FALSE(records.NextMemoryEvent(&e));
}

TEST(RecordCursorTest, CallsReadWithTheMemoryEventsGatherThoseUpToTheWindowsClose) {
  Buffer b;
  b.Add(EventRecord::Memory(RecordKind::kAlloc, 0, "op", nullptr, 5, 64));
  b.Add(EventRecord::Call("op", nullptr, 0, false, 4, 9));
  b.AddMemory(0, Memory(64, 64, 1, 0, 0));
  b.Add(EventRecord::Memory(RecordKind::kFree, 0, "op", nullptr, 11, 64));
  b.Add(EventRecord::FreeOrigin(0, 5));
  b.Add(EventRecord::Call("next", nullptr, 0, false, 10, 12));
  b.Add(EventRecord::Memory(RecordKind::kAlloc, 0, "[no event]", nullptr, 13, 8));
  b.Add(EventRecord::Memory(RecordKind::kAlloc, 0, "[no event]", nullptr, 21, 16));  // late

  const ThreadSnapshot t = b.Snapshot();
  std::vector<MemoryEvent> gathered(1);  // appended to, not replaced
  RecordCursor records(t);
  ASSERT_TRUE(records.NextCallGathering(&gathered, 20));
  EXPECT_STREQ(records.call().name, "op");
  EXPECT_EQ(records.call().places, 1);
  ASSERT_EQ(gathered.size(), 2u);  // the allocation before it
  EXPECT_EQ(gathered[1].delta, 64);
  ASSERT_TRUE(records.NextCallGathering(&gathered, 20));
  EXPECT_STREQ(records.call().name, "next");
  ASSERT_EQ(gathered.size(), 3u);
  EXPECT_EQ(gathered[2].delta, -64);
  EXPECT_EQ(gathered[2].alloc_tick, 5u);  // its origin read with it
  EXPECT_FALSE(records.NextCallGathering(&gathered, 20));
  ASSERT_EQ(gathered.size(), 4u);  // the one after the last call; not the one past 20
  EXPECT_EQ(gathered[3].tick, 13u);
}

TEST(RecordCursorTest, ACallComesWithItsMemoryFiguresAndItsGpuScope) {
  static const char kTag[] = "[2, 2]";
  Buffer b;
  b.Add(EventRecord::Memory(RecordKind::kAlloc, 1, "conv", nullptr, 5, 4096));
  b.Add(EventRecord::Call("conv", kTag, 3, false, 2, 9));
  b.AddMemory(0, Memory(4096, 4096, 1, 0, 0));
  b.AddMemory(2, Memory(10, 30, 3, 20, 2));
  b.Add(EventRecord::GpuScope(77));
  b.Add(EventRecord::OpDetail(nullptr, 6, 0, 1));
  b.Add(EventRecord::Memory(RecordKind::kFree, 1, "[no event]", nullptr, 11, 4096));
  b.Add(EventRecord::Call("relu", nullptr, 0, true, 1, 12));

  const ThreadSnapshot t = b.Snapshot();
  RecordCursor memory(t);
  MemoryEvent e;
  ASSERT_TRUE(memory.NextMemoryEvent(&e));
  EXPECT_EQ(e.tick, 5u);
  EXPECT_EQ(e.place, 1);
  EXPECT_EQ(e.delta, 4096);
  EXPECT_STREQ(e.name, "conv");
  ASSERT_TRUE(memory.NextMemoryEvent(&e));
  EXPECT_EQ(e.delta, -4096);  // a free
  EXPECT_EQ(e.alloc_thread, -1);
  EXPECT_FALSE(memory.NextMemoryEvent(&e));  // the calls' figures are no allocations

  RecordCursor records(t);
  ASSERT_TRUE(records.NextCall());
  const RecordedCall& conv = records.call();
  EXPECT_EQ(conv.index, 1u);
  EXPECT_STREQ(conv.name, "conv");
  EXPECT_EQ(conv.tag, kTag);
  EXPECT_EQ(conv.start, 2u);
  EXPECT_EQ(conv.end, 9u);
  EXPECT_EQ(conv.duration(), 7u);
  EXPECT_EQ(conv.depth, 3u);
  EXPECT_FALSE(conv.cut);
  ASSERT_EQ(conv.places, 2);
  EXPECT_EQ(conv.memory[0].place, 0);
  EXPECT_EQ(conv.memory[0].stats.peak_bytes, 4096);
  EXPECT_EQ(conv.memory[1].place, 2);
  EXPECT_EQ(conv.memory[1].stats.alloc_bytes, 30);
  EXPECT_EQ(conv.memory[1].stats.alloc_count, 3);
  EXPECT_EQ(conv.memory[1].stats.free_bytes, 20);
  EXPECT_EQ(conv.memory[1].stats.free_count, 2);
  EXPECT_TRUE(conv.has_gpu_scope);
  EXPECT_EQ(conv.gpu_scope, 77u);
  EXPECT_EQ(conv.sequence, 5);
  EXPECT_EQ(conv.inputs, nullptr);

  ASSERT_TRUE(records.NextCall());  // past the free
  EXPECT_EQ(records.call().index, 9u);
  EXPECT_TRUE(records.call().cut);
  EXPECT_EQ(records.call().places, 0);  // nothing of conv's carries over
  EXPECT_FALSE(records.call().has_gpu_scope);
  EXPECT_EQ(records.call().sequence, -1);
  EXPECT_FALSE(records.NextCall());
  EXPECT_FALSE(records.NextCall());  // and stays at the end
}

// The buffer bound can cut a pair of memory records after its first half: that half is
// no figure, and what the buffer holds after it is still read.
TEST(RecordCursorTest, AMemoryPairCutShortIsSkipped) {
  Buffer b;
  b.Add(EventRecord::Call("a", nullptr, 0, false, 1, 2));
  EventRecord pair[2];
  ScopeMemoryRecord{0, Memory(8, 8, 1, 0, 0)}.Encode(pair);
  b.Add(pair[0]);
  b.Add(EventRecord::Call("b", nullptr, 0, false, 3, 4));
  b.Add(pair[0]);  // the last record of the buffer

  const ThreadSnapshot t = b.Snapshot();
  RecordCursor records(t);
  ASSERT_TRUE(records.NextCall());
  EXPECT_STREQ(records.call().name, "a");
  EXPECT_EQ(records.call().places, 0);
  ASSERT_TRUE(records.NextCall());
  EXPECT_STREQ(records.call().name, "b");
  EXPECT_EQ(records.call().places, 0);
  EXPECT_FALSE(records.NextCall());
}

// A later append can find room again (another thread's chunk failed and gave its budget
// back): the GPU scope id after a lone half still belongs to the call.
TEST(RecordCursorTest, TheGpuScopeAfterALoneHalfIsTheCallsStill) {
  Buffer b;
  b.Add(EventRecord::Call("a", nullptr, 0, false, 1, 2));
  b.AddMemory(1, Memory(8, 8, 1, 0, 0));
  EventRecord pair[2];
  ScopeMemoryRecord{0, Memory(8, 8, 1, 0, 0)}.Encode(pair);
  b.Add(pair[0]);
  b.Add(EventRecord::GpuScope(5));

  const ThreadSnapshot t = b.Snapshot();
  RecordCursor records(t);
  ASSERT_TRUE(records.NextCall());
  EXPECT_EQ(records.call().places, 1);
  EXPECT_EQ(records.call().memory[0].place, 1);
  EXPECT_TRUE(records.call().has_gpu_scope);
  EXPECT_EQ(records.call().gpu_scope, 5u);
  EXPECT_FALSE(records.NextCall());
}

TEST(RecordCursorTest, ItReadsNoFurtherThanTheSnapshotsSize) {
  Buffer b;
  b.Add(EventRecord::Call("kept", nullptr, 0, false, 1, 2));
  ThreadSnapshot t = b.Snapshot();  // taken here: what follows is published later
  b.AddMemory(0, Memory(8, 8, 1, 0, 0));
  b.Add(EventRecord::Call("later", nullptr, 0, false, 3, 4));
  RecordCursor records(t);
  ASSERT_TRUE(records.NextCall());
  EXPECT_STREQ(records.call().name, "kept");
  EXPECT_EQ(records.call().places, 0);
  EXPECT_FALSE(records.NextCall());
}

TEST(RecordCursorTest, KeptIsWhatTheWindowHolds) {
  Collection c;
  c.end_tick = 100;
  RecordedCall call;
  call.end = 100;
  EXPECT_TRUE(Kept(c, call));
  call.end = 101;  // ended after the window closed
  EXPECT_FALSE(Kept(c, call));
  call.end = 50;
  call.cut = true;  // begun before the last reset
  EXPECT_FALSE(Kept(c, call));
  MemoryEvent e{};
  e.tick = 100;
  EXPECT_TRUE(Kept(c, e));
  e.tick = 101;
  EXPECT_FALSE(Kept(c, e));
}

}  // namespace
}  // namespace paddle_prof::internal
