#include "chunk_scanner.h"

#include <algorithm>

namespace tracepipe {

namespace {

// src/schema/definition-limits.ts, MAX_DESCRIPTION_BYTES.
constexpr size_t kMaxDescriptionBytes = 5 + 2 * (2 + 256) + 3 + 8 + 1 + 8 + 2 + 1024 * (2 + 256 + 1);

int64_t Align8(int64_t n) { return (n + 7) & ~int64_t{7}; }

}  // namespace

ChunkScanner::ChunkScanner(const SessionMemory& m)
    : m_(m),
      next_chunk_seq_(m.max_slots(), 0),
      current_(m.max_slots(), -1),
      consumed_(m.max_slots(), 0),
      next_seq_(m.max_slots(), 0),
      by_slot_(m.max_slots()),
      held_(m.max_slots()),
      holding_(m.max_slots(), false) {}

int64_t ChunkScanner::Scan(RecordVisitor& v) {
  // ChunksTaken before the slot count: see chunk-scanner.ts.
  const int32_t taken = m_.Load(ctl::kChunksTaken);
  const int slots = m_.SlotCount();
  if (taken != taken_at_walk_) {
    taken_at_walk_ = taken;
    for (int s = 0; s < slots; s++) by_slot_[s].clear();
    for (int c = 0; c < m_.chunk_count(); c++) {
      const int32_t state = m_.Plain(m_.ChunkWord(c, chunk_i32::kState));
      if (state != chunk_state::kOwned && state != chunk_state::kSealed) continue;
      const int32_t owner = m_.Plain(m_.ChunkWord(c, chunk_i32::kOwner));
      if (owner >= 0 && owner < slots) by_slot_[owner].push_back(c);
    }
  }
  int64_t visited = 0;
  for (int s = 0; s < slots; s++) {
    const int64_t n = DrainSlot(s, v);
    if (n < 0) return -1;
    visited += n;
  }
  return visited;
}

int64_t ChunkScanner::DrainSlot(int s, RecordVisitor& v) {
  int64_t visited = 0;
  for (;;) {
    int c = current_[s];
    if (c < 0) {
      // The list is from the start of the pass: a chunk freed since may now belong to another thread.
      const int32_t want = next_chunk_seq_[s];
      for (int k : by_slot_[s]) {
        const int32_t state = m_.Load(m_.ChunkWord(k, chunk_i32::kState));
        if ((state == chunk_state::kOwned || state == chunk_state::kSealed) && m_.Plain(m_.ChunkWord(k, chunk_i32::kOwner)) == s &&
            m_.Plain(m_.ChunkWord(k, chunk_i32::kChunkSeq)) == want) {
          c = k;
          break;
        }
      }
      if (c < 0) return visited;
      current_[s] = c;
      consumed_[s] = m_.ChunkBase(c) + kChunkHeaderBytes;
      next_seq_[s] = m_.F64At(m_.ChunkBase(c) + chunk_f64::kFirstSeq * 8);
    }
    const int64_t base = m_.ChunkBase(c);
    const int32_t state = m_.Load(m_.ChunkWord(c, chunk_i32::kState));
    const int64_t committed = static_cast<uint32_t>(m_.Load(m_.ChunkWord(c, chunk_i32::kCommitted)));
    const int64_t limit = std::min(committed, base + m_.chunk_size());
    int64_t r = consumed_[s];
    double seq = next_seq_[s];
    while (r < committed) {
      const int64_t len = r + 8 <= limit ? m_.U32At(r) : 0;
      if (len < kRecordHeaderSize || r + len > limit) {
        // Never trust shared memory blindly: a chunk still being written is read again next pass; a
        // sealed one is abandoned, and what it held shows as a sequence gap (counted as dropped).
        if (state != chunk_state::kSealed) {
          consumed_[s] = r;
          next_seq_[s] = seq;
          return visited;
        }
        r = committed;
        break;
      }
      const uint32_t type = m_.U32At(r + 4);
      const uint8_t* payload = m_.Bytes(r + kRecordHeaderSize);
      const uint32_t payload_len = static_cast<uint32_t>(len - kRecordHeaderSize);
      if (type == kMetadataType || type == kMetadataPartType) {
        if (!AddPart(v, s, payload, payload_len, m_.F64At(r + 8), type == kMetadataType)) return -1;
      } else if (type == kSequenceGapType) {
        seq++;
      } else {
        v.Event(s, type, m_.F64At(r + 8), seq++, payload, payload_len);
        visited++;
      }
      r += Align8(len);
    }
    consumed_[s] = r;
    next_seq_[s] = seq;
    if (state != chunk_state::kSealed) return visited;
    current_[s] = -1;
    next_chunk_seq_[s]++;
    m_.ReleaseChunk(c);
    // Drop mode only (NativeDrain's precondition): no producer parks, so there is no head to wake.
  }
}

bool ChunkScanner::AddPart(RecordVisitor& v, int s, const uint8_t* bytes, uint32_t len, double offset, bool last) {
  if (offset == 0 && last) {
    holding_[s] = false;
    held_[s].clear();
    return v.Metadata(s, bytes, len);
  }
  if (offset == 0) {
    holding_[s] = true;
    held_[s].clear();
  }
  if (!holding_[s] || offset != static_cast<double>(held_[s].size()) || held_[s].size() + len > kMaxDescriptionBytes) {
    holding_[s] = false;
    held_[s].clear();
    return true;
  }
  held_[s].insert(held_[s].end(), bytes, bytes + len);
  if (!last) return true;
  std::vector<uint8_t> whole;
  whole.swap(held_[s]);
  holding_[s] = false;
  return v.Metadata(s, whole.data(), whole.size());
}

std::vector<SlotProgress> ChunkScanner::Progress() const {
  std::vector<SlotProgress> out;
  const int slots = m_.SlotCount();
  for (int s = 0; s < slots; s++) {
    const int32_t state = m_.Load(m_.SlotI32(s, slot_i32::kState));
    if (state == slot_state::kClaiming) continue;
    SlotProgress p{};
    p.slot = s;
    p.thread_id = m_.Plain(m_.SlotI32(s, slot_i32::kThreadId));
    p.next_seq = std::max(m_.F64(m_.SlotF64(s, slot_f64::kNextSeq)), next_seq_[s]);
    p.dropped = m_.F64(m_.SlotF64(s, slot_f64::kDropped));
    p.origin_delta_ns = m_.F64(m_.SlotF64(s, slot_f64::kOriginDeltaNs));
    for (int r = 0; r < kDropReasons; r++) p.dropped_by_reason[r] = m_.F64(m_.SlotF64(s, slot_f64::kDroppedByReason + r));
    p.parks = m_.F64(m_.SlotF64(s, slot_f64::kParks));
    p.longest_park_ns = m_.F64(m_.SlotF64(s, slot_f64::kLongestParkNs));
    p.dead = state == slot_state::kDead;
    p.in_slow_path = m_.Load(m_.SlotI32(s, slot_i32::kInSlowPath)) != 0;
    p.open = state == slot_state::kLive;
    p.os_thread_id = m_.Plain(m_.SlotI32(s, slot_i32::kOsThreadId));
    out.push_back(p);
  }
  return out;
}

}  // namespace tracepipe
