// The drain's side of the buffer, as src/buffers/chunk-scanner.ts reads it: every committed record,
// thread by thread in each thread's chunk order; sealed chunks go back to the budget once read.
#pragma once

#include <cstdint>
#include <vector>

#include "session_memory.h"

namespace tracepipe {

class RecordVisitor {
 public:
  virtual ~RecordVisitor() = default;
  // A whole description: a varint type index, then a descriptor. False fails the session.
  virtual bool Metadata(int slot, const uint8_t* bytes, size_t len) = 0;
  virtual void Event(int slot, uint32_t type_index, double timestamp_ms, double seq, const uint8_t* payload, uint32_t len) = 0;
};

struct SlotProgress {
  int slot;
  int32_t thread_id;
  double next_seq;
  double dropped;
  double origin_delta_ns;
  double dropped_by_reason[kDropReasons];
  double parks;
  double longest_park_ns;
  bool dead;
  bool in_slow_path;
  bool open;
  int32_t os_thread_id;
};

class ChunkScanner {
 public:
  explicit ChunkScanner(const SessionMemory& m);
  // One pass over everything committed so far; the records visited, or -1 when a visitor refused one.
  int64_t Scan(RecordVisitor& v);
  std::vector<SlotProgress> Progress() const;

 private:
  int64_t DrainSlot(int s, RecordVisitor& v);
  // A description's parts (record-abi.ts): false when the visitor refused the whole.
  bool AddPart(RecordVisitor& v, int s, const uint8_t* bytes, uint32_t len, double offset, bool last);

  const SessionMemory& m_;
  std::vector<int32_t> next_chunk_seq_, current_;
  std::vector<int64_t> consumed_;
  std::vector<double> next_seq_;
  std::vector<std::vector<int>> by_slot_;
  std::vector<std::vector<uint8_t>> held_;
  std::vector<bool> holding_;
  int32_t taken_at_walk_ = -1;
};

}  // namespace tracepipe
