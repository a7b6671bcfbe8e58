// Bytes out, as src/format/trace-writer.ts writes them (docs/FORMAT.md): blocks of a kind, a length and
// a CRC-32, events with compressed headers, sequence points, drop reasons and the end of stream. The
// stream header comes encoded from JavaScript. A reader cannot tell which drain wrote a stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tracepipe {

struct ThreadProgress {
  int32_t thread_id;
  double next_seq;
  double dropped;
};

struct StreamTotals {
  double events, dropped, end_time_ns, max_lateness_ns, threads, event_types;
};

// src/format/stream-header.ts: the format this writer writes.
constexpr uint16_t kFormatMajor = 1, kFormatMinor = 2;

class TraceWriter {
 public:
  // The stream header: `TPTRACE\0`, u16 major, u16 minor, u32 length, the JSON document, and the
  // CRC-32 of everything after the magic.
  void Header(const uint8_t* json, size_t n);
  void Raw(const uint8_t* bytes, size_t n);
  // A metadata block: a type's stream id and its descriptor's bytes (metadata-codec.ts, as described).
  void Metadata(int type_id, const uint8_t* descriptor, size_t n);
  void Event(int type_id, int32_t thread_id, double seq, int64_t ts_ns, const uint8_t* payload, uint32_t len);
  void SequencePoint(int64_t time_ns, int64_t max_lateness_ns, const std::vector<ThreadProgress>& threads);
  void DropReasons(const std::vector<int32_t>& threads, const std::vector<std::vector<double>>& counts);
  void End(const StreamTotals& t);
  // Closes an open events block; the bytes pending are then data(), size() long, until Clear().
  void CloseBlock();
  const uint8_t* data() const { return buf_.get(); }
  size_t size() const { return pos_; }
  void Clear() { pos_ = 0; }

 private:
  // Room for `n` more bytes (the buffer only grows: it is reused after every flush).
  void Ensure(size_t n);
  void OpenBlock(uint8_t kind);
  void Varint(uint64_t n);
  void F64(double v);

  std::unique_ptr<uint8_t[]> buf_;
  size_t pos_ = 0;
  size_t cap_ = 0;
  int64_t block_start_ = -1;
  int64_t prev_ts_ = 0;
  int32_t prev_thread_ = -1;
  int prev_type_ = -1;
  double prev_seq_ = 0;
};

uint32_t Crc32(const uint8_t* data, size_t n, uint32_t previous);

}  // namespace tracepipe
