// A session's drain without a JavaScript isolate: src/drain/drain-loop.ts for a Drop-mode session
// written to a file (what a startup session is) or a client's socket, on a thread of its own. It writes the
// stream src/drain/drain-loop.ts writes, pass for pass; what differs is how it hears of work.
// JavaScript's Atomics.notify cannot wake a native thread: whoever notifies the drain (producers, the
// owner) calls Wake through the addon too (native_drain.cc, wakeSession; SessionMemory.wakeDrain).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "chunk_scanner.h"
#include "session_memory.h"
#include "trace_writer.h"

namespace tracepipe {

// What Node says of a failed system call ("ENOSPC: no space left on device, write"), as the worker
// drain's sinks report it.
std::string ErrnoMessage(int e, const char* call);

struct ProducerResult {
  int32_t thread_id;
  double dropped;
  double dropped_by_reason[kDropReasons];
  double parks;
  double longest_park_ns;
};

struct DrainResult {
  double events_written = 0;
  double events_dropped = 0;
  double bytes_written = 0;
  std::vector<ProducerResult> producers;
  std::string error;
};

class DrainLoop : public RecordVisitor {
 public:
  // Where the stream goes: a file, or a descriptor a reader consumes as it is written (a client's
  // socket: src/sinks/fd-sink.ts). Either way `fd` is the loop's, closed as it ends (for a socket, a
  // copy of its opener's, so that a number the opener closes and reuses is never written).
  enum class Output { kFile, kLiveDescriptor };
  // `fd` holds the stream's header already; `origin_ns` is the trace origin on CLOCK_MONOTONIC.
  DrainLoop(const SessionMemory& m, int fd, Output output, int64_t origin_ns);
  // Runs until the session stops or the output fails; never throws.
  DrainResult Run();
  // From any thread: look at the session now (a producer's chunk, a stop).
  void Wake();
  // From any thread: write nothing more and end (the owner gave up waiting for the stream's end).
  void Abandon();
  // The loop never ran: the descriptor stays its opener's.
  void Disown() { fd_ = -1; }

  bool Metadata(int slot, const uint8_t* bytes, size_t len) override;
  void Event(int slot, uint32_t type_index, double timestamp_ms, double seq, const uint8_t* payload, uint32_t len) override;

 private:
  int64_t NowNs() const;
  void RefreshSlots();
  int64_t Pass(bool force);
  std::vector<SlotProgress> FinalPass();
  void MarkProgress(int64_t pass_start_ns, const std::vector<SlotProgress>& slots);
  void Flush();
  void Settle();
  void EndStream(const std::vector<SlotProgress>& slots);
  void ReasonsOf(const SlotProgress& p, double* counts) const;
  // Sleeps until Wake is called (then `done()` is looked at), `done()` holds, or `ms` pass.
  template <typename Done>
  void WaitUntil(double ms, Done done);
  void WaitForWork(int32_t wake, bool quiet, int32_t turnover, bool owed_to_next_sample);
  void Fail(const std::string& why);
  // A live reader's needs (src/drain/drain-loop.ts, markTime and markOwed): sequence points past the
  // last events, written after the producers go quiet.
  bool MarkTime() const;
  bool MarkOwed() const;
  // src/sinks/fd-sink.ts: writes what a non-blocking socket takes, retrying while it is full (for at
  // most kReaderStallMs without progress), and notices a reader that went away.
  bool WriteLive(const uint8_t* p, size_t n);
  void CheckPeer();
  double MaxSleepMs() const;
  // The loss tracker's part (src/format/loss-tracker.ts): gaps in each thread's sequence numbers.
  void NoteNext(int32_t thread, double next) { loss_next_[thread] = next; }
  void Observe(int32_t thread, double seq);

  const SessionMemory& m_;
  int fd_;
  const Output output_;
  int64_t origin_ns_;
  // Live outputs: SampleHandOvers as the last pass that read events saw it, whether it read a sample,
  // and when the reader was last checked for.
  int32_t sample_hand_overs_ = 0;
  bool read_sample_ = false;
  double last_peer_check_ms_ = -1e300;
  ChunkScanner scanner_;
  TraceWriter writer_;
  std::string error_;
  // Per slot: thread-local type index → stream type id (0: not described; kLeftOut: past a reader's limits).
  std::vector<std::vector<int>> slot_types_;
  std::map<std::string, int> type_ids_;
  int64_t fields_described_ = 0;
  std::vector<double> expected_seq_;
  std::vector<bool> known_;
  std::vector<int32_t> thread_ids_;
  std::vector<double> origin_delta_;
  std::vector<double> refused_times_, refused_types_;
  double last_sequence_point_ns_ = -1e300;
  double max_lateness_ns_ = 0;
  double events_written_ = 0;
  double last_event_ns_ = 0;
  double bytes_taken_ = 0;
  std::unordered_map<int32_t, double> loss_next_;
  std::vector<ThreadProgress> last_progress_;
  double dropped_ = 0;

  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t owner_wakes_ = 0;
  std::atomic<bool> abandoned_{false};
};

}  // namespace tracepipe
