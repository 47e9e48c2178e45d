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

EventRecord Numbered(uint64_t n) { return EventRecord::Call("n", nullptr, 0, false, n, n); }

// A flight recorder's buffer: chunks whose records were all released take the newest
// records, the indexes go on growing, and a rewind gathers the chunks again.
TEST(EventBufferTest, ReleasedChunksTakeTheNewestRecords) {
  constexpr size_t kPer = EventBuffer::kRecordsPerChunk;
  auto buffer = std::make_unique<EventBuffer>();
  const size_t before = EventBuffer::ChunksInUse();
  for (size_t i = 0; i < 2 * kPer; ++i) ASSERT_TRUE(buffer->Append(Numbered(i)));
  EXPECT_EQ(EventBuffer::ChunksInUse() - before, 2u);
  buffer->ReleaseBelow(kPer + 10);  // all of chunk 0, part of chunk 1
  for (size_t i = 2 * kPer; i < 3 * kPer; ++i) ASSERT_TRUE(buffer->Append(Numbered(i)));
  EXPECT_EQ(EventBuffer::ChunksInUse() - before, 2u);  // chunk 0 became chunk 2
  ASSERT_EQ(buffer->Size(), 3 * kPer);
  for (size_t i : {kPer + 10, 2 * kPer - 1, 2 * kPer, 3 * kPer - 1}) {
    EXPECT_EQ((*buffer)[i].start, i);
  }
  // Chunk 1 still holds kept records: the next chunk is a new one.
  ASSERT_TRUE(buffer->Append(Numbered(3 * kPer)));
  EXPECT_EQ(EventBuffer::ChunksInUse() - before, 3u);
  EXPECT_EQ((*buffer)[3 * kPer].start, 3 * kPer);
  buffer->ReleaseBelow(10);  // never lowers what was released
  buffer->Clear();
  for (size_t i = 0; i < 3 * kPer; ++i) ASSERT_TRUE(buffer->Append(Numbered(i)));
  EXPECT_EQ(EventBuffer::ChunksInUse() - before, 3u);  // the same three chunks, reused
  EXPECT_EQ((*buffer)[0].start, 0u);
  EXPECT_EQ((*buffer)[3 * kPer - 1].start, 3 * kPer - 1);
}

}  // namespace
}  // namespace paddle_prof::internal
