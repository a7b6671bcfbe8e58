#include "trace_writer.h"

#include <cstring>

namespace tracepipe {

namespace {

// src/format/block.ts.
constexpr uint8_t kMetadataBlock = 1, kEventsBlock = 2, kSequencePointBlock = 3, kEndOfStreamBlock = 4, kDropReasonsBlock = 5;
constexpr size_t kBlockHeaderSize = 12;
constexpr int64_t kMaxEventBlock = 64 * 1024;
// src/format/trace-writer.ts, EventFlag.
constexpr uint8_t kNewType = 1, kNewThread = 2, kSequenceJump = 4;

// CRC-32 (IEEE) eight bytes at a time ("slicing by 8"): the checksum is most of a drain's work
// otherwise (a byte-wise table: 28 % of a process writing 10 M events a second).
struct CrcTables {
  uint32_t t[8][256];
  CrcTables() {
    for (uint32_t n = 0; n < 256; n++) {
      uint32_t c = n;
      for (int k = 0; k < 8; k++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
      for (int k = 1; k < 8; k++) t[k][n] = (t[k - 1][n] >> 8) ^ t[0][t[k - 1][n] & 0xff];
    }
  }
};
const CrcTables kCrc;

uint64_t Zigzag(int64_t n) { return n >= 0 ? static_cast<uint64_t>(n) * 2 : static_cast<uint64_t>(-(n + 1)) * 2 + 1; }

void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

uint32_t Crc32(const uint8_t* data, size_t n, uint32_t previous) {
  uint32_t c = ~previous;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, data + i, 4);  // Little endian hosts only, as the shared memory's layout already assumes.
    std::memcpy(&hi, data + i + 4, 4);
    lo ^= c;
    c = kCrc.t[7][lo & 0xff] ^ kCrc.t[6][(lo >> 8) & 0xff] ^ kCrc.t[5][(lo >> 16) & 0xff] ^ kCrc.t[4][lo >> 24] ^ kCrc.t[3][hi & 0xff] ^
        kCrc.t[2][(hi >> 8) & 0xff] ^ kCrc.t[1][(hi >> 16) & 0xff] ^ kCrc.t[0][hi >> 24];
  }
  for (; i < n; i++) c = kCrc.t[0][(c ^ data[i]) & 0xff] ^ (c >> 8);
  return ~c;
}

void TraceWriter::Ensure(size_t n) {
  if (pos_ + n <= cap_) return;
  size_t cap = cap_ == 0 ? 256 * 1024 : cap_ * 2;
  while (cap < pos_ + n) cap *= 2;
  std::unique_ptr<uint8_t[]> next(new uint8_t[cap]);
  if (pos_ > 0) std::memcpy(next.get(), buf_.get(), pos_);
  buf_ = std::move(next);
  cap_ = cap;
}

void TraceWriter::Raw(const uint8_t* bytes, size_t n) {
  Ensure(n);
  std::memcpy(buf_.get() + pos_, bytes, n);
  pos_ += n;
}

// Callers make room first (at most 10 bytes).
void TraceWriter::Varint(uint64_t n) {
  uint8_t* b = buf_.get();
  while (n >= 128) {
    b[pos_++] = static_cast<uint8_t>((n & 127) | 128);
    n >>= 7;
  }
  b[pos_++] = static_cast<uint8_t>(n);
}

void TraceWriter::F64(double v) {
  Ensure(8);
  std::memcpy(buf_.get() + pos_, &v, 8);  // Little endian hosts only, as the shared memory's layout already assumes.
  pos_ += 8;
}

void TraceWriter::OpenBlock(uint8_t kind) {
  Ensure(kBlockHeaderSize + 64);
  block_start_ = static_cast<int64_t>(pos_);
  std::memset(buf_.get() + pos_, 0, kBlockHeaderSize);
  buf_[pos_] = kind;
  pos_ += kBlockHeaderSize;
}

void TraceWriter::CloseBlock() {
  if (block_start_ < 0) return;
  uint8_t* block = buf_.get() + block_start_;
  const size_t payload = pos_ - static_cast<size_t>(block_start_) - kBlockHeaderSize;
  PutU32(block + 4, static_cast<uint32_t>(payload));
  PutU32(block + 8, Crc32(block + kBlockHeaderSize, payload, Crc32(block, 8, 0)));
  block_start_ = -1;
  prev_thread_ = -1;
  prev_type_ = -1;
}

void TraceWriter::Header(const uint8_t* json, size_t n) {
  static const uint8_t kMagic[8] = {'T', 'P', 'T', 'R', 'A', 'C', 'E', 0};
  Raw(kMagic, 8);
  const size_t start = pos_;
  const uint8_t prefix[8] = {kFormatMajor & 0xff, kFormatMajor >> 8, kFormatMinor & 0xff, kFormatMinor >> 8, 0, 0, 0, 0};
  Raw(prefix, 8);
  PutU32(buf_.get() + start + 4, static_cast<uint32_t>(n));
  Raw(json, n);
  uint8_t crc[4];
  PutU32(crc, Crc32(buf_.get() + start, pos_ - start, 0));
  Raw(crc, 4);
}

void TraceWriter::Metadata(int type_id, const uint8_t* descriptor, size_t n) {
  CloseBlock();
  OpenBlock(kMetadataBlock);
  Varint(1);
  Varint(static_cast<uint64_t>(type_id));
  Raw(descriptor, n);
  CloseBlock();
}

void TraceWriter::Event(int type_id, int32_t thread_id, double seq, int64_t ts_ns, const uint8_t* payload, uint32_t len) {
  if (block_start_ < 0 || static_cast<int64_t>(pos_) - block_start_ > kMaxEventBlock) {
    CloseBlock();
    OpenBlock(kEventsBlock);
    Varint(Zigzag(ts_ns));
    prev_ts_ = ts_ns;
  }
  // The flags, up to five varints and the payload.
  Ensure(1 + 5 * 10 + len);
  const size_t flags_at = pos_++;
  uint8_t flags = 0;
  if (type_id != prev_type_) {
    flags |= kNewType;
    Varint(static_cast<uint64_t>(type_id));
    prev_type_ = type_id;
  }
  if (thread_id != prev_thread_) {
    flags |= kNewThread;
    Varint(static_cast<uint64_t>(thread_id));
    Varint(static_cast<uint64_t>(seq));
    prev_thread_ = thread_id;
  } else if (seq != prev_seq_ + 1) {
    flags |= kSequenceJump;
    Varint(static_cast<uint64_t>(seq - prev_seq_ - 1));
  }
  prev_seq_ = seq;
  buf_[flags_at] = flags;
  Varint(Zigzag(ts_ns - prev_ts_));
  prev_ts_ = ts_ns;
  Varint(len);
  std::memcpy(buf_.get() + pos_, payload, len);
  pos_ += len;
}

void TraceWriter::SequencePoint(int64_t time_ns, int64_t max_lateness_ns, const std::vector<ThreadProgress>& threads) {
  CloseBlock();
  OpenBlock(kSequencePointBlock);
  Ensure(30 + threads.size() * 30);
  Varint(Zigzag(time_ns));
  Varint(static_cast<uint64_t>(max_lateness_ns < 0 ? 0 : max_lateness_ns));
  Varint(threads.size());
  for (const ThreadProgress& t : threads) {
    Varint(static_cast<uint64_t>(t.thread_id));
    Varint(static_cast<uint64_t>(t.next_seq));
    Varint(static_cast<uint64_t>(t.dropped));
  }
  CloseBlock();
}

void TraceWriter::DropReasons(const std::vector<int32_t>& threads, const std::vector<std::vector<double>>& counts) {
  CloseBlock();
  OpenBlock(kDropReasonsBlock);
  Ensure(10);
  Varint(threads.size());
  for (size_t i = 0; i < threads.size(); i++) {
    Ensure(20 + counts[i].size() * 10);
    Varint(static_cast<uint64_t>(threads[i]));
    Varint(counts[i].size());
    for (double n : counts[i]) Varint(static_cast<uint64_t>(n));
  }
  CloseBlock();
}

void TraceWriter::End(const StreamTotals& t) {
  CloseBlock();
  OpenBlock(kEndOfStreamBlock);
  for (double v : {t.events, t.dropped, t.end_time_ns, t.max_lateness_ns, t.threads, t.event_types}) F64(v);
  CloseBlock();
}

}  // namespace tracepipe
