// The per-thread record store: chunk crossing, reuse after Clear, the budget.
#include "event_buffer.h"

#include <gtest/gtest.h>

#include <memory>

#include "flags.h"

namespace paddle_prof::internal {
namespace {

EventRecord Record(uint64_t i) { return EventRecord::Call("op", nullptr, 3, false, i, i + 1); }

TEST(EventBufferTest, KeepsRecordsAcrossChunkBoundaries) {
  auto buffer = std::make_unique<EventBuffer>();
  const size_t n = EventBuffer::kRecordsPerChunk + 10;
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(buffer->Append(Record(i)));
  ASSERT_EQ(buffer->Size(), n);
  for (const size_t i :
       {size_t{0}, EventBuffer::kRecordsPerChunk - 1, EventBuffer::kRecordsPerChunk, n - 1}) {
    EXPECT_EQ((*buffer)[i].start, i);
    EXPECT_EQ((*buffer)[i].depth(), 3u);
  }
}

TEST(EventBufferTest, ClearKeepsTheMemoryForReuse) {
  auto buffer = std::make_unique<EventBuffer>();
  for (size_t i = 0; i < EventBuffer::kRecordsPerChunk + 1; ++i) buffer->Append(Record(i));
  const size_t chunks = EventBuffer::ChunksInUse();
  buffer->Clear();
  EXPECT_EQ(buffer->Size(), 0u);
  for (size_t i = 0; i < EventBuffer::kRecordsPerChunk + 1; ++i) buffer->Append(Record(i + 7));
  EXPECT_EQ(EventBuffer::ChunksInUse(), chunks);
  EXPECT_EQ((*buffer)[0].start, 7u);
}

TEST(EventBufferTest, RefusesRecordsPastTheBudget) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_max_buffer_mb =
      static_cast<int>((EventBuffer::ChunksInUse() + 1) * EventBuffer::kChunkBytes >> 20);
  auto buffer = std::make_unique<EventBuffer>();
  for (size_t i = 0; i < EventBuffer::kRecordsPerChunk; ++i) ASSERT_TRUE(buffer->Append(Record(i)));
  EXPECT_FALSE(buffer->Append(Record(0)));
  EXPECT_EQ(buffer->Size(), EventBuffer::kRecordsPerChunk);
}

TEST(EventRecordTest, PacksTagDepthAndCutInOneWord) {
  static const char kTag[] = "[32, 3, 224, 224]";
  const EventRecord r = EventRecord::Call("conv2d", kTag, 255, true, 1, 2);
  EXPECT_EQ(r.tag(), kTag);
  EXPECT_EQ(r.depth(), 255u);
  EXPECT_TRUE(r.cut());
  const EventRecord plain = EventRecord::Call("conv2d", nullptr, 0, false, 1, 2);
  EXPECT_EQ(plain.tag(), nullptr);
  EXPECT_EQ(plain.depth(), 0u);
  EXPECT_FALSE(plain.cut());
}

}  // namespace
}  // namespace paddle_prof::internal
