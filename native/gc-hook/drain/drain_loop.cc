#include "drain_loop.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace tracepipe {

namespace {

// The constants of src/drain/drain-loop.ts, and how often this loop looks at the wake word instead of
// sleeping on it: while there is work about (the JavaScript drain's IDLE_WAIT_MS), and while quiet.
constexpr double kIdleWaitMs = 100;
constexpr double kQuietWaitMs = 5000;
constexpr double kSignalPollMs = 1000;
constexpr double kIdleMarkNs = 1e9;
constexpr double kSampleMarkWaitMs = 1500;
// src/sinks/fd-sink.ts.
constexpr double kRetryWaitMs = 2;
constexpr double kReaderStallMs = 30000;
constexpr double kPeerCheckMs = 2000;
constexpr double kPeerCheckEarlyMs = kPeerCheckMs / 4;
constexpr size_t kFlushBytes = 1 << 20;
constexpr double kStopSettleMs = 2000;
constexpr double kOpenQuietMs = 100;
constexpr double kRunningQuietMs = 500;
constexpr double kSettlePollMs = 2;
constexpr int kFinalPasses = 8;
constexpr double kMaxTimestampNs = 4503599627370496.0;  // 2^52
constexpr int kLeftOut = -1;
// src/format/reader-limits.ts and src/schema/definition-limits.ts.
constexpr size_t kMaxEventTypes = 8192;
constexpr int64_t kMaxFieldsInAllTypes = 65536;
constexpr uint64_t kMaxNameBytes = 256;
constexpr uint64_t kMaxFieldsPerEvent = 1024;
constexpr int kFieldTypes = 13;
// Thread-local type indexes are small (one per type the process defines); a larger one is corrupt.
constexpr uint64_t kMaxTypeIndex = 1 << 20;

double NowMs() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace

std::string ErrnoMessage(int e, const char* call) { return std::string(uv_err_name(-e)) + ": " + uv_strerror(-e) + ", " + call; }

namespace {

// JavaScript's Math.round.
double RoundHalfUp(double x) { return std::floor(x + 0.5); }

bool ValidUtf8(const uint8_t* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t c = s[i];
    size_t extra;
    uint32_t cp;
    if (c < 0x80) {
      i++;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      extra = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= n) return false;
    for (size_t k = 1; k <= extra; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

// Reads a description as src/format/metadata-codec.ts's decodeDescriptor does, refusing what it refuses.
class DescriptionReader {
 public:
  DescriptionReader(const uint8_t* b, size_t n) : b_(b), n_(n) {}
  bool Varint(uint64_t* out) {
    uint64_t result = 0;
    for (int i = 0; i < 8; i++) {
      if (pos_ >= n_) return false;
      const uint8_t b = b_[pos_++];
      result |= static_cast<uint64_t>(b & 127) << (7 * i);
      if (b < 128) {
        *out = result;
        return true;
      }
    }
    return false;
  }
  bool Skip(size_t k) {
    if (pos_ + k > n_) return false;
    pos_ += k;
    return true;
  }
  bool String() {
    uint64_t len;
    if (!Varint(&len) || len > kMaxNameBytes || pos_ + len > n_) return false;
    if (!ValidUtf8(b_ + pos_, len)) return false;
    pos_ += len;
    return true;
  }
  bool U8(uint8_t* out) {
    if (pos_ >= n_) return false;
    *out = b_[pos_++];
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  const uint8_t* b_;
  size_t n_;
  size_t pos_ = 0;
};

// Whether a thread has been runnable (on a CPU or ready for one) for at least a quarter of the time
// since Mark: src/drain/running-threads.ts, reading /proc/self/task/<tid>/schedstat.
class RunningThreads {
 public:
  void Mark(const std::vector<int32_t>& tids, double now_ms) {
    mark_ms_ = now_ms;
    marks_.clear();
    for (int32_t tid : tids) {
      double ns;
      if (RunnableNs(tid, &ns)) marks_[tid] = ns;
    }
  }
  bool AnyRunning(const std::vector<int32_t>& tids, double now_ms) {
    const double elapsed_ns = (now_ms - mark_ms_) * 1e6;
    for (int32_t tid : tids) {
      auto it = marks_.find(tid);
      double ns;
      if (it != marks_.end() && RunnableNs(tid, &ns) && ns - it->second >= elapsed_ns * 0.25) return true;
    }
    return false;
  }

 private:
  static bool RunnableNs(int32_t tid, double* out) {
    if (tid <= 0) return false;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char line[96];
    const ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n <= 0) return false;
    line[n] = 0;
    unsigned long long on_cpu = 0, waiting = 0, runs = 0;
    if (std::sscanf(line, "%llu %llu %llu", &on_cpu, &waiting, &runs) != 3) return false;
    *out = static_cast<double>(on_cpu) + static_cast<double>(waiting);
    return true;
  }
  double mark_ms_ = 0;
  std::unordered_map<int32_t, double> marks_;
};

}  // namespace

DrainLoop::DrainLoop(const SessionMemory& m, int fd, Output output, int64_t origin_ns)
    : m_(m), fd_(fd), output_(output), origin_ns_(origin_ns), scanner_(m) {}

bool DrainLoop::MarkTime() const {
  const double now = static_cast<double>(NowNs());
  return output_ == Output::kLiveDescriptor && now - last_event_ns_ < kIdleMarkNs && now - last_sequence_point_ns_ >= kIdleWaitMs * 1e6;
}

bool DrainLoop::MarkOwed() const {
  return output_ == Output::kLiveDescriptor && last_sequence_point_ns_ < last_event_ns_ + kIdleWaitMs * 1e6;
}

bool DrainLoop::WriteLive(const uint8_t* p, size_t n) {
  double last_progress = NowMs();
  while (n > 0) {
    if (abandoned_.load()) return false;
    const ssize_t k = write(fd_, p, n);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      bytes_taken_ += static_cast<double>(k);
      last_progress = NowMs();
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (NowMs() - last_progress >= kReaderStallMs) {
        Fail("the reader took nothing for 30 s");
        return false;
      }
      WaitUntil(kRetryWaitMs, [] { return false; });
      continue;
    }
    Fail(k < 0 && errno != EPIPE && errno != ECONNRESET && errno != ENOTCONN ? ErrnoMessage(errno, "write") : "the reader closed the connection");
    return false;
  }
  return true;
}

// Never congested (a full socket is waited out in WriteLive); this is where a reader that vanished
// without a write to fail is noticed: a non-blocking read sees end-of-file or a reset.
void DrainLoop::CheckPeer() {
  if (output_ != Output::kLiveDescriptor || abandoned_.load()) return;
  const double now = NowMs();
  if (now - last_peer_check_ms_ < kPeerCheckEarlyMs) return;
  last_peer_check_ms_ = now;
  uint8_t scratch[256];
  for (;;) {
    const ssize_t n = read(fd_, scratch, sizeof scratch);
    if (n > 0) continue;  // What the reader sent is discarded.
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    Fail("the reader closed the connection");
    return;
  }
}

double DrainLoop::MaxSleepMs() const {
  if (output_ != Output::kLiveDescriptor) return kQuietWaitMs;
  return std::max(0.0, last_peer_check_ms_ + kPeerCheckMs - NowMs());
}

int64_t DrainLoop::NowNs() const {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec - origin_ns_;
}

void DrainLoop::Wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  owner_wakes_++;
  cv_.notify_all();
}

template <typename Done>
void DrainLoop::WaitUntil(double ms, Done done) {
  const double deadline = NowMs() + ms;
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t wakes = owner_wakes_;
  for (;;) {
    if (owner_wakes_ != wakes || done()) return;
    const double left = deadline - NowMs();
    if (left <= 0) return;
    cv_.wait_for(lock, std::chrono::microseconds(static_cast<int64_t>(left * 1000)));
  }
}

void DrainLoop::Abandon() {
  abandoned_.store(true);
  Wake();
}

void DrainLoop::Fail(const std::string& why) {
  if (error_.empty()) error_ = why;
}

void DrainLoop::RefreshSlots() {
  for (const SlotProgress& p : scanner_.Progress()) {
    if (static_cast<size_t>(p.slot) >= thread_ids_.size()) {
      const size_t n = static_cast<size_t>(p.slot) + 1;
      thread_ids_.resize(n, 0);
      origin_delta_.resize(n, 0);
      expected_seq_.resize(n, 0);
      known_.resize(n, false);
      refused_times_.resize(n, 0);
      refused_types_.resize(n, 0);
    }
    thread_ids_[p.slot] = p.thread_id;
    origin_delta_[p.slot] = p.origin_delta_ns;
    known_[p.slot] = true;
  }
}

bool DrainLoop::Metadata(int slot, const uint8_t* bytes, size_t len) {
  DescriptionReader r(bytes, len);
  uint64_t type_index, id, version, fields;
  uint8_t level;
  bool ok = r.Varint(&type_index);
  const size_t start = r.pos();
  ok = ok && r.String() && r.String() && r.Varint(&id) && r.Varint(&version) && r.U8(&level) && level <= 5 && r.Skip(8) &&
       r.Varint(&fields) && fields <= kMaxFieldsPerEvent;
  for (uint64_t i = 0; ok && i < fields; i++) {
    uint8_t code;
    ok = r.String() && r.U8(&code) && code >= 1 && code <= kFieldTypes;
  }
  if (!ok || type_index >= kMaxTypeIndex) {
    Fail("corrupt trace: a malformed event type description in the session's buffer");
    return false;
  }
  if (slot_types_.size() <= static_cast<size_t>(slot)) slot_types_.resize(slot + 1);
  std::vector<int>& types = slot_types_[slot];
  if (types.size() <= type_index) types.resize(type_index + 1, 0);
  const std::string key(reinterpret_cast<const char*>(bytes + start), r.pos() - start);
  auto it = type_ids_.find(key);
  if (it != type_ids_.end()) {
    types[type_index] = it->second;
    return true;
  }
  // A type that would take the stream past a reader's limits is left out alone; its events are counted.
  if (type_ids_.size() >= kMaxEventTypes || fields_described_ + static_cast<int64_t>(fields) > kMaxFieldsInAllTypes) {
    types[type_index] = kLeftOut;
    return true;
  }
  const int stream_id = static_cast<int>(type_ids_.size()) + 1;
  type_ids_.emplace(key, stream_id);
  fields_described_ += static_cast<int64_t>(fields);
  writer_.Metadata(stream_id, bytes + start, r.pos() - start);
  types[type_index] = stream_id;
  return true;
}

void DrainLoop::Event(int slot, uint32_t type_index, double timestamp_ms, double seq, const uint8_t* payload, uint32_t len) {
  if (static_cast<size_t>(slot) >= slot_types_.size() || type_index >= slot_types_[slot].size()) return;
  const int type_id = slot_types_[slot][type_index];
  if (type_id == 0) return;  // A producer always describes a type first; never trust shared memory blindly.
  if (static_cast<size_t>(slot) >= known_.size() || !known_[slot]) RefreshSlots();
  if (static_cast<size_t>(slot) >= known_.size()) return;
  if (type_id == kLeftOut) {
    refused_types_[slot]++;
    return;
  }
  const double ts = RoundHalfUp(timestamp_ms * 1e6 + origin_delta_[slot]);
  if (!(ts > -kMaxTimestampNs && ts < kMaxTimestampNs)) {
    refused_times_[slot]++;
    return;
  }
  max_lateness_ns_ = std::max(max_lateness_ns_, last_sequence_point_ns_ - ts);
  const int32_t thread = thread_ids_[slot];
  writer_.Event(type_id, thread, seq, static_cast<int64_t>(ts), payload, len);
  const double expected = expected_seq_[slot];
  expected_seq_[slot] = seq + 1;
  events_written_++;
  last_event_ns_ = std::max(last_event_ns_, ts);
  if (seq != expected) {
    NoteNext(thread, expected);
    Observe(thread, seq);
  }
  if (writer_.size() > kFlushBytes) Flush();
}

void DrainLoop::Observe(int32_t thread, double seq) {
  auto it = loss_next_.find(thread);
  const double expected = it == loss_next_.end() ? 0 : it->second;
  if (seq > expected) dropped_ += seq - expected;
  loss_next_[thread] = std::max(expected, seq + 1);
}

void DrainLoop::Flush() {
  writer_.CloseBlock();
  const uint8_t* p = writer_.data();
  size_t left = writer_.size();
  if (abandoned_.load()) Fail("the owner stopped waiting for the drain");
  if (output_ == Output::kLiveDescriptor) {
    if (left > 0 && error_.empty()) WriteLive(p, left);
    left = 0;
  }
  while (left > 0 && error_.empty() && fd_ >= 0) {
    const ssize_t n = write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Fail(n < 0 ? ErrnoMessage(errno, "write") : "the output took no bytes");
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
    bytes_taken_ += static_cast<double>(n);
  }
  writer_.Clear();
}

void DrainLoop::MarkProgress(int64_t pass_start_ns, const std::vector<SlotProgress>& slots) {
  last_progress_.clear();
  for (const SlotProgress& p : slots) last_progress_.push_back({p.thread_id, p.next_seq, p.dropped});
  writer_.SequencePoint(pass_start_ns, static_cast<int64_t>(std::max(0.0, max_lateness_ns_)), last_progress_);
  last_sequence_point_ns_ = static_cast<double>(pass_start_ns);
}

int64_t DrainLoop::Pass(bool force) {
  m_.Add(ctl::kDrainPasses, 1);
  const int64_t pass_start = NowNs();
  RefreshSlots();
  const int64_t visited = scanner_.Scan(*this);
  if (visited < 0) return -1;
  if (visited > 0) {
    // Read after the scan: a sample's hand-over is counted before its chunk is sealed.
    const int32_t hand_overs = m_.Load(ctl::kSampleHandOvers);
    read_sample_ = hand_overs != sample_hand_overs_;
    sample_hand_overs_ = hand_overs;
  }
  if (visited > 0 || force) MarkProgress(pass_start, scanner_.Progress());
  Flush();
  m_.Store(ctl::kEventsWritten, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(events_written_))));
  return visited;
}

std::vector<SlotProgress> DrainLoop::FinalPass() {
  m_.Add(ctl::kDrainPasses, 1);
  const int64_t pass_start = NowNs();
  RefreshSlots();
  scanner_.Scan(*this);
  std::vector<SlotProgress> slots = scanner_.Progress();
  // A producer that keeps writing cannot hold the stop: after the last scan, counts as they are.
  for (int i = 0; i < kFinalPasses && scanner_.Scan(*this) > 0; i++) slots = scanner_.Progress();
  MarkProgress(pass_start, slots);
  Flush();
  return slots;
}

void DrainLoop::Settle() {
  const double deadline = NowMs() + kStopSettleMs;
  RunningThreads running;
  double quiet_since = NowMs();
  double open_seq = -1;
  while (NowMs() < deadline && error_.empty()) {
    const std::vector<SlotProgress> slots = scanner_.Progress();
    bool in_slow_path = false;
    for (const SlotProgress& p : slots) in_slow_path = in_slow_path || (p.in_slow_path && !p.dead);
    if (!in_slow_path) {
      std::vector<int32_t> tids;
      for (const SlotProgress& p : slots) {
        if (p.open && !p.dead) tids.push_back(p.os_thread_id);
      }
      if (m_.Load(ctl::kExiting) != 0 || tids.empty()) return;
      // What the open threads committed since the last look: taken now, and a sign they still write.
      if (Pass(false) < 0) return;
      double seq = 0;
      for (const SlotProgress& p : scanner_.Progress()) {
        if (p.open && !p.dead) seq += p.next_seq;
      }
      const double now = NowMs();
      if (seq != open_seq) {
        quiet_since = now;
        running.Mark(tids, now);
      } else if (now - quiet_since >= (running.AnyRunning(tids, now) ? kRunningQuietMs : kOpenQuietMs)) {
        return;
      }
      open_seq = seq;
    }
    const int32_t wake = m_.Load(ctl::kDrainWake);
    WaitUntil(kSettlePollMs, [&] { return m_.Load(ctl::kDrainWake) != wake; });
  }
}

void DrainLoop::ReasonsOf(const SlotProgress& p, double* counts) const {
  for (int r = 0; r < kDropReasons; r++) counts[r] = p.dropped_by_reason[r];
  if (static_cast<size_t>(p.slot) < refused_times_.size()) {
    counts[drop_reason::kInvalidArgument] += refused_times_[p.slot];
    counts[drop_reason::kTooLarge] += refused_types_[p.slot];
  }
}

void DrainLoop::EndStream(const std::vector<SlotProgress>& slots) {
  for (size_t s = 0; s < expected_seq_.size(); s++) {
    if (known_[s]) NoteNext(thread_ids_[s], expected_seq_[s]);
  }
  for (const ThreadProgress& t : last_progress_) {
    auto it = loss_next_.find(t.thread_id);
    const double expected = it == loss_next_.end() ? 0 : it->second;
    if (t.next_seq > expected) {
      dropped_ += t.next_seq - expected;
      loss_next_[t.thread_id] = t.next_seq;
    }
  }
  std::vector<int32_t> threads;
  std::vector<std::vector<double>> counts;
  for (const SlotProgress& p : slots) {
    threads.push_back(p.thread_id);
    counts.emplace_back(kDropReasons);
    ReasonsOf(p, counts.back().data());
  }
  writer_.DropReasons(threads, counts);
  writer_.End({events_written_, dropped_, std::max(last_event_ns_, static_cast<double>(NowNs())), std::max(0.0, max_lateness_ns_),
               static_cast<double>(thread_ids_.size()), static_cast<double>(type_ids_.size())});
  Flush();
}

void DrainLoop::WaitForWork(int32_t wake, bool quiet, int32_t turnover, bool owed_to_next_sample) {
  if (!quiet) {
    WaitUntil(kIdleWaitMs, [&] { return m_.Load(ctl::kDrainWake) != wake; });
    return;
  }
  // Asleep: producers wake it (wakeSession), as they wake a worker drain. A native signal handler
  // cannot, so while one may end the session the sleep is bounded as the worker drain's is.
  m_.Store(ctl::kDrainAsleep, 1);
  if (m_.ChunkTurnover() == turnover) {
    double longest = std::min(m_.Load(ctl::kSignalFlush) != 0 ? kSignalPollMs : kQuietWaitMs, owed_to_next_sample ? kSampleMarkWaitMs : kQuietWaitMs);
    longest = std::min(longest, MaxSleepMs());
    WaitUntil(longest, [&] { return m_.Load(ctl::kDrainWake) != wake || m_.ChunkTurnover() != turnover; });
  }
  m_.Store(ctl::kDrainAsleep, 0);
}

DrainResult DrainLoop::Run() {
  m_.Prefault();
  int64_t last_visited = 0;
  while (error_.empty() && !abandoned_.load()) {
    const int32_t wake = m_.Load(ctl::kDrainWake);
    if (m_.State() >= session_state::kStopping) break;
    m_.Prefault();
    const int32_t turnover = m_.ChunkTurnover();
    CheckPeer();
    if (!error_.empty()) break;
    // A point still owed is written by whatever pass comes next (drain-loop.ts says why).
    last_visited = Pass(last_visited > 0 || MarkTime() || MarkOwed());
    if (last_visited < 0) break;
    const bool owed = MarkOwed();
    // The next sample wakes this drain (a live reader's), and its pass writes the point owed.
    const bool owed_to_next_sample = owed && read_sample_;
    const bool quiet = (last_visited == 0 || m_.AllChunksFree()) && (!owed || owed_to_next_sample);
    WaitForWork(wake, quiet, turnover, owed_to_next_sample);
  }
  if (error_.empty() && abandoned_.load()) Fail("the owner stopped waiting for the drain");
  if (error_.empty() && m_.State() == session_state::kFailed) Fail("session failed");
  if (error_.empty()) Settle();
  if (error_.empty()) EndStream(FinalPass());
  if (!error_.empty()) m_.SetState(session_state::kFailed);
  if (fd_ >= 0) {
    // Not every output can be synced (pipes, /dev/null, sockets); the data was written either way.
    if (output_ == Output::kFile) fsync(fd_);
    // A file is this drain's; a live descriptor is its own copy of the opener's (native_drain.cc).
    if (close(fd_) != 0 && errno != EINTR && output_ == Output::kFile) Fail(ErrnoMessage(errno, "close"));
    fd_ = -1;
  }
  DrainResult result;
  result.events_written = events_written_;
  result.events_dropped = dropped_;
  result.bytes_written = bytes_taken_;
  result.error = error_;
  for (const SlotProgress& p : scanner_.Progress()) {
    ProducerResult pr{};
    pr.thread_id = p.thread_id;
    ReasonsOf(p, pr.dropped_by_reason);
    pr.dropped = p.dropped;
    if (static_cast<size_t>(p.slot) < refused_times_.size()) pr.dropped += refused_times_[p.slot] + refused_types_[p.slot];
    pr.parks = p.parks;
    pr.longest_park_ns = p.longest_park_ns;
    result.producers.push_back(pr);
  }
  // Lets an owner that is exiting wait for the flush (it waits on this thread natively).
  if (error_.empty()) m_.SetState(session_state::kStopped);
  return result;
}

}  // namespace tracepipe
