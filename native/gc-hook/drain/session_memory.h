// A session's shared memory as the native drain sees it: the layout src/buffers/session-memory.ts and
// src/schema/record-abi.ts define (test/native-drain.test.mjs checks that the two agree), read with
// the sequentially consistent atomics JavaScript's Atomics use on the same words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tracepipe {

namespace ctl {
constexpr int kMagic = 0, kState = 1, kDrainWake = 2, kFreeCount = 3, kSlotCount = 4, kChunkCount = 5, kChunkSize = 6,
              kMode = 7, kMaxSlots = 9, kSlotsOffset = 10, kChunksOffset = 11, kTicketNext = 12, kTicketServing = 13,
              kChunksFreed = 15, kChunksTaken = 19, kResidentChunks = 20, kSealCounter = 21, kDrainAsleep = 23,
              kDrainPasses = 24, kExiting = 25, kSignalFlush = 26, kEventsWritten = 27, kSampleHandOvers = 31;
}  // namespace ctl
constexpr int32_t kMagicValue = 0x54504d31;
constexpr int kControlBytes = 256;
namespace session_state {
constexpr int32_t kEnabled = 1, kStopping = 2, kStopped = 3, kFailed = 4;
}
namespace buffering_mode {
constexpr int32_t kDrop = 0;
}
constexpr int kSlotBytes = 128;
namespace slot_i32 {
constexpr int kThreadId = 0, kState = 1, kWake = 2, kInSlowPath = 5, kOsThreadId = 6;
}
namespace slot_f64 {
constexpr int kNextSeq = 4, kDropped = 5, kOriginDeltaNs = 6, kLongestParkNs = 7, kParks = 8, kDroppedByReason = 9;
}
namespace slot_state {
constexpr int32_t kClaiming = 0, kLive = 1, kDead = 3;
}
constexpr int kDropReasons = 6;
namespace drop_reason {
constexpr int kTooLarge = 1, kInvalidArgument = 2;
}
constexpr int kChunkHeaderBytes = 32;
namespace chunk_i32 {
constexpr int kState = 0, kOwner = 1, kCommitted = 2, kChunkSeq = 3;
}
namespace chunk_f64 {
constexpr int kFirstSeq = 2;
}
namespace chunk_state {
constexpr int32_t kFree = 0, kOwned = 1, kSealed = 2;
}
constexpr int kRecordHeaderSize = 16;
constexpr uint32_t kMetadataType = 0;
constexpr uint32_t kMetadataPartType = 0xffffffffu;
constexpr uint32_t kSequenceGapType = 0xfffffffeu;
// What is made resident before the session starts (session-memory.ts, INITIAL_RESIDENT_BYTES).
constexpr int64_t kInitialResidentBytes = 2 << 20;

class SessionMemory {
 public:
  // Checks the control header against the buffer's length; false (with `why`) when it does not fit.
  bool Attach(uint8_t* base, size_t length, const char** why) {
    base_ = base;
    length_ = length;
    if (length < static_cast<size_t>(kControlBytes) || (reinterpret_cast<uintptr_t>(base) & 7) != 0) return Refuse(why, "too small");
    if (Load(ctl::kMagic) != kMagicValue) return Refuse(why, "bad magic number");
    chunk_size_ = Load(ctl::kChunkSize);
    chunk_count_ = Load(ctl::kChunkCount);
    max_slots_ = Load(ctl::kMaxSlots);
    slots_offset_ = Load(ctl::kSlotsOffset);
    chunks_offset_ = Load(ctl::kChunksOffset);
    if (chunk_size_ < 256 || chunk_size_ % 8 != 0 || chunk_count_ < 1 || max_slots_ < 1 || slots_offset_ < kControlBytes ||
        slots_offset_ % 8 != 0 || chunks_offset_ % 8 != 0 ||
        static_cast<int64_t>(slots_offset_) + static_cast<int64_t>(max_slots_) * kSlotBytes > chunks_offset_ ||
        static_cast<int64_t>(chunks_offset_) + static_cast<int64_t>(chunk_count_) * chunk_size_ > static_cast<int64_t>(length)) {
      return Refuse(why, "inconsistent layout");
    }
    return true;
  }

  int32_t Load(int index) const { return __atomic_load_n(I32(index), __ATOMIC_SEQ_CST); }
  void Store(int index, int32_t v) const { __atomic_store_n(I32(index), v, __ATOMIC_SEQ_CST); }
  int32_t Add(int index, int32_t v) const { return __atomic_fetch_add(I32(index), v, __ATOMIC_SEQ_CST); }
  // A word read without ordering (JavaScript's plain typed-array read).
  int32_t Plain(int index) const { return __atomic_load_n(I32(index), __ATOMIC_RELAXED); }
  double F64(int index) const {
    double v;
    std::memcpy(&v, base_ + static_cast<size_t>(index) * 8, 8);
    return v;
  }
  uint32_t U32At(int64_t byte) const { return static_cast<uint32_t>(__atomic_load_n(reinterpret_cast<int32_t*>(base_ + byte), __ATOMIC_RELAXED)); }
  double F64At(int64_t byte) const {
    double v;
    std::memcpy(&v, base_ + byte, 8);
    return v;
  }
  const uint8_t* Bytes(int64_t byte) const { return base_ + byte; }

  int32_t chunk_size() const { return chunk_size_; }
  int32_t chunk_count() const { return chunk_count_; }
  int32_t max_slots() const { return max_slots_; }
  int64_t ChunkBase(int c) const { return chunks_offset_ + static_cast<int64_t>(c) * chunk_size_; }
  int ChunkWord(int c, int word) const { return static_cast<int>(ChunkBase(c) >> 2) + word; }
  int SlotI32(int slot, int word) const { return ((slots_offset_ + slot * kSlotBytes) >> 2) + word; }
  int SlotF64(int slot, int word) const { return ((slots_offset_ + slot * kSlotBytes) >> 3) + word; }
  int SlotCount() const {
    int32_t n = Load(ctl::kSlotCount);
    return n < 0 ? 0 : (n < max_slots_ ? n : max_slots_);
  }
  int32_t State() const { return Load(ctl::kState); }

  // The drain's side of SessionMemory.setState (the notify that wakes JavaScript waiters is the owner's:
  // it waits on this drain natively).
  void SetState(int32_t s) const {
    Store(ctl::kState, s);
    Add(ctl::kDrainWake, 1);
  }

  // Chunks taken plus chunks sealed so far (SessionMemory.chunkTurnover).
  int32_t ChunkTurnover() const { return Load(ctl::kChunksTaken) + Load(ctl::kSealCounter); }
  bool AllChunksFree() const { return Load(ctl::kFreeCount) == chunk_count_; }

  // SessionMemory.releaseChunk.
  void ReleaseChunk(int c) const {
    Store(ChunkWord(c, chunk_i32::kState), chunk_state::kFree);
    Add(ctl::kFreeCount, 1);
    Add(ctl::kChunksFreed, 1);
  }

  // SessionMemory.prefault: pages made resident ahead of the producers, with an atomic add of 0 (a
  // write access that cannot undo a producer's concurrent store).
  void Prefault() const {
    int32_t resident = Plain(ctl::kResidentChunks);
    if (resident >= chunk_count_) return;
    if (resident < 0) resident = 0;  // Never trust shared memory blindly: only this drain writes the word.

    const int32_t in_use = chunk_count_ - Load(ctl::kFreeCount);
    if (resident > 0 && static_cast<int64_t>(in_use) * 2 <= resident) return;
    const int64_t first = (kInitialResidentBytes + chunk_size_ - 1) / chunk_size_;
    int64_t target = first;
    if (2 * static_cast<int64_t>(resident) > target) target = 2 * static_cast<int64_t>(resident);
    if (2 * static_cast<int64_t>(in_use) > target) target = 2 * static_cast<int64_t>(in_use);
    if (target > chunk_count_) target = chunk_count_;
    const int64_t end = ChunkBase(static_cast<int>(target));
    for (int64_t b = ChunkBase(resident) & ~int64_t{4095}; b < end; b += 4096) __atomic_fetch_add(reinterpret_cast<int32_t*>(base_ + b), 0, __ATOMIC_SEQ_CST);
    Store(ctl::kResidentChunks, static_cast<int32_t>(target));
  }

 private:
  int32_t* I32(int index) const { return reinterpret_cast<int32_t*>(base_) + index; }
  static bool Refuse(const char** why, const char* what) {
    *why = what;
    return false;
  }

  uint8_t* base_ = nullptr;
  size_t length_ = 0;
  int32_t chunk_size_ = 0, chunk_count_ = 0, max_slots_ = 0, slots_offset_ = 0, chunks_offset_ = 0;
};

}  // namespace tracepipe
