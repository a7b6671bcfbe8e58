// tracepipe's native drain: a session's drain on a thread with no JavaScript isolate (drain/drain_loop.h).
// A JavaScript drain is a worker thread, which costs a process ~10 MB and tens of ms of CPU to start
// (an isolate, Node's bootstrap, the drain's code compiled); this one costs a thread.
//
// JavaScript side: src/sinks/native-drain.ts. start() takes the session's SharedArrayBuffer, an open
// output descriptor (a file it owns from then on, or a client's socket), the trace origin, the stream
// header's document, a client's prologue and a function it calls on this thread, through the loop,
// with the result once the stream has ended; it writes the first bytes before it returns.
// publishSessions() and publishedSessions() are the process's list of sessions (session_registry.cc).
// wakeSession() is the doorbell of whoever notifies the drain (a producer on any thread, the owner
// for a stop), abandon() gives a drain up, join() is the exit flush's bounded wait.

#include <node.h>
#include <uv.h>
#include <v8.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <unordered_map>

#include "drain/drain_loop.h"
#include "session_registry.h"
#include "pin_addon.h"

namespace {

using tracepipe::DrainLoop;
using tracepipe::DrainResult;

// How long an environment's teardown waits for a drain still running (its stream is being ended).
constexpr int64_t kTeardownWaitMs = 500;

// Every running drain, by its session memory's address, for producers on any thread (wakeSession):
// an entry goes before its drain's thread ends, so a producer never reaches a drain being freed.
// Never destroyed: a producer may ask as the process exits.
std::mutex* const registry_mutex = new std::mutex();
auto* const registry = new std::unordered_map<const void*, DrainLoop*>();

struct Drain {
  // Keeps the session's memory mapped while the thread reads it.
  std::shared_ptr<v8::BackingStore> store;
  tracepipe::SessionMemory memory;
  std::unique_ptr<DrainLoop> loop;
  pthread_t thread{};
  std::mutex mutex;
  std::condition_variable finished_cv;
  bool finished = false;
  // The environment ended while the thread still ran: the thread must touch nothing of it.
  bool orphaned = false;
  DrainResult result;
  uv_async_t* async = nullptr;
  v8::Global<v8::Function> on_done;
  v8::Global<v8::Context> context;
  int id = 0;
  struct Drains* owner = nullptr;
  // The header written by start(): its bytes count with the drain's (a prologue's do not, as with a worker).
  double header_bytes = 0;
};

// One per environment (the thread that loaded the addon).
struct Drains {
  std::unordered_map<int, Drain*> live;
  int next_id = 1;
  v8::Isolate* isolate = nullptr;
};

void Throw(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

void Set(v8::Local<v8::Context> context, v8::Local<v8::Object> o, const char* key, v8::Local<v8::Value> value) {
  o->Set(context, v8::String::NewFromUtf8(context->GetIsolate(), key).ToLocalChecked(), value).Check();
}

v8::Local<v8::Object> ResultObject(v8::Isolate* isolate, v8::Local<v8::Context> context, const DrainResult& r) {
  v8::Local<v8::Object> o = v8::Object::New(isolate);
  Set(context, o, "eventsWritten", v8::Number::New(isolate, r.events_written));
  Set(context, o, "eventsDropped", v8::Number::New(isolate, r.events_dropped));
  Set(context, o, "bytesWritten", v8::Number::New(isolate, r.bytes_written));
  v8::Local<v8::Array> producers = v8::Array::New(isolate, static_cast<int>(r.producers.size()));
  for (size_t i = 0; i < r.producers.size(); i++) {
    const tracepipe::ProducerResult& p = r.producers[i];
    v8::Local<v8::Object> po = v8::Object::New(isolate);
    Set(context, po, "threadId", v8::Number::New(isolate, p.thread_id));
    Set(context, po, "dropped", v8::Number::New(isolate, p.dropped));
    v8::Local<v8::Array> reasons = v8::Array::New(isolate, tracepipe::kDropReasons);
    for (int k = 0; k < tracepipe::kDropReasons; k++) reasons->Set(context, k, v8::Number::New(isolate, p.dropped_by_reason[k])).Check();
    Set(context, po, "droppedByReason", reasons);
    Set(context, po, "parks", v8::Number::New(isolate, p.parks));
    Set(context, po, "longestParkNs", v8::Number::New(isolate, p.longest_park_ns));
    producers->Set(context, static_cast<uint32_t>(i), po).Check();
  }
  Set(context, o, "producers", producers);
  if (!r.error.empty()) Set(context, o, "error", v8::String::NewFromUtf8(isolate, r.error.c_str()).ToLocalChecked());
  return o;
}

void CloseAsync(Drain* d) {
  uv_close(reinterpret_cast<uv_handle_t*>(d->async), [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
  d->async = nullptr;
}

// On the owner's thread, once the drain's thread has ended: the drain freed (its memory released
// here, on a JavaScript thread), then the result to JavaScript.
void Finished(uv_async_t* async) {
  Drain* d = static_cast<Drain*>(async->data);
  {
    std::lock_guard<std::mutex> lock(d->mutex);
    if (!d->finished) return;
  }
  pthread_join(d->thread, nullptr);
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  v8::HandleScope scope(isolate);
  v8::Local<v8::Context> context = d->context.Get(isolate);
  v8::Context::Scope context_scope(context);
  v8::Local<v8::Function> on_done = d->on_done.Get(isolate);
  d->result.bytes_written += d->header_bytes;
  v8::Local<v8::Value> argv[] = {ResultObject(isolate, context, d->result)};
  d->owner->live.erase(d->id);
  CloseAsync(d);
  d->on_done.Reset();
  d->context.Reset();
  delete d;
  node::MakeCallback(isolate, context->Global(), on_done, 1, argv, node::async_context{0, 0});
}

void* RunDrain(void* arg) {
  Drain* d = static_cast<Drain*>(arg);
  DrainResult result = d->loop->Run();
  {
    std::lock_guard<std::mutex> forget(*registry_mutex);
    registry->erase(d->store->Data());
  }
  std::lock_guard<std::mutex> lock(d->mutex);
  d->result = std::move(result);
  d->finished = true;
  d->finished_cv.notify_all();
  if (!d->orphaned) uv_async_send(d->async);
  return nullptr;
}

Drain* Find(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Drains* drains = static_cast<Drains*>(info.Data().As<v8::External>()->Value());
  const int id = info[0]->Int32Value(info.GetIsolate()->GetCurrentContext()).FromMaybe(0);
  auto it = drains->live.find(id);
  return it == drains->live.end() ? nullptr : it->second;
}

// How long the stream's first bytes may wait for room in a socket once part of them is in.
constexpr int kFirstBytesWaitMs = 1000;
// WriteFirst's answer for a socket that took none of them: the session takes a worker drain, which
// waits for its reader off this thread.
const char* const kWouldBlock = "would block";

// Writes the output's first bytes (a client's prologue, the stream's header) on the calling thread,
// before the drain runs: an output that takes nothing fails the start, as it does a worker drain's.
// Returns the error as the worker drain would say it, kWouldBlock, or an empty string.
std::string WriteFirst(int fd, bool live, const uint8_t* p, size_t n) {
  const size_t all = n;
  int waited = 0;
  while (n > 0) {
    const ssize_t k = write(fd, p, n);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (n == all) return kWouldBlock;
      // Part of a small header in a socket's buffer: the rest follows as soon as the reader reads.
      if (waited >= kFirstBytesWaitMs) return "the reader took nothing for 1 s";
      struct pollfd pfd = {fd, POLLOUT, 0};
      poll(&pfd, 1, 10);
      waited += 10;
      continue;
    }
    const int e = k < 0 ? errno : EIO;
    if (live && (e == EPIPE || e == ECONNRESET || e == ENOTCONN)) return "the reader closed the connection";
    return tracepipe::ErrnoMessage(e, "write");
  }
  return "";
}

// start(sab, fd, live: boolean, originNs: bigint, header: Uint8Array (the JSON document), prologue:
// Uint8Array | undefined, onDone(result)) → id, or -1 when a socket took none of the first bytes (the
// session takes a worker). Throws with the reason when they cannot be written. `live`: `fd` is its
// opener's, a reader consumes it as it is written, and the drain writes to a copy of it (else a file
// it owns, from a successful start on).
void Start(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  Drains* drains = static_cast<Drains*>(info.Data().As<v8::External>()->Value());
  if (info.Length() < 7 || !info[0]->IsSharedArrayBuffer() || !info[1]->IsInt32() || !info[2]->IsBoolean() || !info[3]->IsBigInt() || !info[4]->IsUint8Array() ||
      !(info[5]->IsUndefined() || info[5]->IsUint8Array()) || !info[6]->IsFunction()) {
    return Throw(isolate, "start(sab, fd, live, originNs, header, prologue, onDone)");
  }
  uv_loop_t* uv_loop = node::GetCurrentEventLoop(isolate);
  if (uv_loop == nullptr) return Throw(isolate, "this thread has no event loop");
  auto d = std::make_unique<Drain>();
  d->store = info[0].As<v8::SharedArrayBuffer>()->GetBackingStore();
  const char* why = nullptr;
  if (!d->memory.Attach(static_cast<uint8_t*>(d->store->Data()), d->store->ByteLength(), &why)) {
    return Throw(isolate, (std::string("tracepipe: session memory refused: ") + why).c_str());
  }
  if (d->memory.Load(tracepipe::ctl::kMode) != tracepipe::buffering_mode::kDrop) return Throw(isolate, "the native drain drains Drop-mode sessions only");
  const DrainLoop::Output output = info[2]->IsTrue() ? DrainLoop::Output::kLiveDescriptor : DrainLoop::Output::kFile;
  const int64_t origin_ns = info[3].As<v8::BigInt>()->Int64Value();
  const int fd = info[1].As<v8::Int32>()->Value();
  {
    std::vector<uint8_t> first;
    if (info[5]->IsUint8Array()) {
      v8::Local<v8::Uint8Array> prologue = info[5].As<v8::Uint8Array>();
      first.resize(prologue->ByteLength());
      prologue->CopyContents(first.data(), first.size());
    }
    v8::Local<v8::Uint8Array> json = info[4].As<v8::Uint8Array>();
    std::vector<uint8_t> json_bytes(json->ByteLength());
    json->CopyContents(json_bytes.data(), json_bytes.size());
    tracepipe::TraceWriter header;
    header.Header(json_bytes.data(), json_bytes.size());
    first.insert(first.end(), header.data(), header.data() + header.size());
    const std::string failed = WriteFirst(fd, output == DrainLoop::Output::kLiveDescriptor, first.data(), first.size());
    if (failed == kWouldBlock) return info.GetReturnValue().Set(-1);
    if (!failed.empty()) {
      isolate->ThrowException(v8::Exception::Error(v8::String::NewFromUtf8(isolate, failed.c_str()).ToLocalChecked()));
      return;
    }
    d->header_bytes = static_cast<double>(header.size());
  }
  d->async = new uv_async_t();
  if (uv_async_init(uv_loop, d->async, Finished) != 0) {
    delete d->async;
    d->async = nullptr;
    return Throw(isolate, "cannot open the native drain's doorbell");
  }
  d->async->data = d.get();
  d->on_done.Reset(isolate, info[6].As<v8::Function>());
  d->context.Reset(isolate, context);
  d->id = drains->next_id++;
  d->owner = drains;
  // A socket's number is its opener's, who closes it (and may reuse it) when the session ends, which
  // can be before this thread is done (a stop that timed out): the drain writes to a copy of its own.
  const int own_fd = output == DrainLoop::Output::kLiveDescriptor ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : fd;
  if (own_fd < 0) return Throw(isolate, ("cannot start the native drain: " + tracepipe::ErrnoMessage(errno, "dup")).c_str());
  d->loop = std::make_unique<DrainLoop>(d->memory, own_fd, output, origin_ns);
  {
    std::lock_guard<std::mutex> lock(*registry_mutex);
    (*registry)[d->store->Data()] = d->loop.get();
  }
  // A process at its thread limit gets an error, as a worker's would be, not an abort.
  const int failed = pthread_create(&d->thread, nullptr, RunDrain, d.get());
  if (failed != 0) {
    {
      std::lock_guard<std::mutex> lock(*registry_mutex);
      registry->erase(d->store->Data());
    }
    if (own_fd != fd) close(own_fd);
    d->loop->Disown();
    CloseAsync(d.get());
    return Throw(isolate, (std::string("cannot start the native drain's thread: ") + std::strerror(failed)).c_str());
  }
  Drain* raw = d.release();
  drains->live[raw->id] = raw;
  info.GetReturnValue().Set(raw->id);
}

// wakeSession(sab): a producer on any thread took or sealed a chunk that its session's drain should
// see now (SessionMemory.wakeDrain); nothing when no native drain runs on that memory.
void WakeSession(const v8::FunctionCallbackInfo<v8::Value>& info) {
  if (info.Length() < 1 || !info[0]->IsSharedArrayBuffer()) return;
  const void* data = info[0].As<v8::SharedArrayBuffer>()->GetBackingStore()->Data();
  std::lock_guard<std::mutex> lock(*registry_mutex);
  auto it = registry->find(data);
  if (it != registry->end()) it->second->Wake();
}

// abandon(id): the owner gave the drain up (it did not finish in time): it writes nothing more, closes
// its descriptor (a file, or its copy of a socket) and ends as soon as it is out of the write it may
// be blocked in.
void Abandon(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Drain* d = Find(info);
  if (d != nullptr && d->loop) d->loop->Abandon();
}

// join(id, timeoutMs) → whether the drain has ended its stream (the exit flush's wait: no loop runs then).
void Join(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Drain* d = Find(info);
  const double ms = info[1]->NumberValue(info.GetIsolate()->GetCurrentContext()).FromMaybe(0);
  if (d == nullptr) return info.GetReturnValue().Set(true);
  std::unique_lock<std::mutex> lock(d->mutex);
  d->finished_cv.wait_for(lock, std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, ms) * 1000)), [d] { return d->finished; });
  info.GetReturnValue().Set(d->finished);
}

// ref(id, on): whether the drain keeps the owner's loop alive until it reports.
void Ref(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Drain* d = Find(info);
  if (d == nullptr || d->async == nullptr) return;
  if (info[1]->BooleanValue(info.GetIsolate())) uv_ref(reinterpret_cast<uv_handle_t*>(d->async));
  else uv_unref(reinterpret_cast<uv_handle_t*>(d->async));
}

// The layout this drain reads, for the test that checks it against src/buffers/session-memory.ts.
void Layout(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Object> o = v8::Object::New(isolate);
  auto n = [&](const char* k, double v) { Set(context, o, k, v8::Number::New(isolate, v)); };
  using namespace tracepipe;
  n("State", ctl::kState), n("DrainWake", ctl::kDrainWake), n("FreeCount", ctl::kFreeCount), n("SlotCount", ctl::kSlotCount);
  n("ChunkCount", ctl::kChunkCount), n("ChunkSize", ctl::kChunkSize), n("Mode", ctl::kMode), n("MaxSlots", ctl::kMaxSlots);
  n("SlotsOffset", ctl::kSlotsOffset), n("ChunksOffset", ctl::kChunksOffset), n("TicketNext", ctl::kTicketNext);
  n("TicketServing", ctl::kTicketServing), n("ChunksFreed", ctl::kChunksFreed), n("ChunksTaken", ctl::kChunksTaken);
  n("ResidentChunks", ctl::kResidentChunks), n("SealCounter", ctl::kSealCounter), n("DrainAsleep", ctl::kDrainAsleep);
  n("DrainPasses", ctl::kDrainPasses), n("Exiting", ctl::kExiting), n("SignalFlush", ctl::kSignalFlush), n("EventsWritten", ctl::kEventsWritten);
  n("SampleHandOvers", ctl::kSampleHandOvers);
  n("magic", kMagicValue), n("controlBytes", kControlBytes), n("slotBytes", kSlotBytes), n("chunkHeaderBytes", kChunkHeaderBytes);
  n("recordHeaderSize", kRecordHeaderSize), n("dropReasons", kDropReasons), n("initialResidentBytes", static_cast<double>(kInitialResidentBytes));
  n("slot.ThreadId", slot_i32::kThreadId), n("slot.State", slot_i32::kState), n("slot.Wake", slot_i32::kWake);
  n("slot.InSlowPath", slot_i32::kInSlowPath), n("slot.OsThreadId", slot_i32::kOsThreadId);
  n("slotF64.NextSeq", slot_f64::kNextSeq), n("slotF64.Dropped", slot_f64::kDropped), n("slotF64.OriginDeltaNs", slot_f64::kOriginDeltaNs);
  n("slotF64.LongestParkNs", slot_f64::kLongestParkNs), n("slotF64.Parks", slot_f64::kParks), n("slotF64.DroppedByReason", slot_f64::kDroppedByReason);
  n("chunk.State", chunk_i32::kState), n("chunk.Owner", chunk_i32::kOwner), n("chunk.Committed", chunk_i32::kCommitted);
  n("chunk.ChunkSeq", chunk_i32::kChunkSeq), n("chunkF64.FirstSeq", chunk_f64::kFirstSeq);
  n("state.Enabled", session_state::kEnabled), n("state.Stopping", session_state::kStopping), n("state.Stopped", session_state::kStopped);
  n("state.Failed", session_state::kFailed), n("slotState.Claiming", slot_state::kClaiming), n("slotState.Live", slot_state::kLive);
  n("slotState.Dead", slot_state::kDead), n("reason.TooLarge", drop_reason::kTooLarge), n("reason.InvalidArgument", drop_reason::kInvalidArgument);
  n("formatMajor", kFormatMajor), n("formatMinor", kFormatMinor);
  n("metadataType", kMetadataType), n("metadataPartType", kMetadataPartType), n("sequenceGapType", kSequenceGapType);
  info.GetReturnValue().Set(o);
}

// The environment ends (its thread exits, or the process): each drain still running is told the
// process is exiting, so it ends its stream without waiting for other threads, and is given a bounded
// time; one that does not finish in it is left to the process's end, touching nothing of this
// environment (its memory stays mapped: it is never freed).
void Cleanup(void* arg) {
  Drains* drains = static_cast<Drains*>(arg);
  // What this thread published goes with it (session_registry.cc).
  tracepipe::ForgetPublished(drains->isolate);
  for (auto& [id, d] : drains->live) {
    (void)id;
    d->memory.Store(tracepipe::ctl::kExiting, 1);
    int32_t expected = tracepipe::session_state::kEnabled;
    __atomic_compare_exchange_n(reinterpret_cast<int32_t*>(d->store->Data()) + tracepipe::ctl::kState, &expected, tracepipe::session_state::kStopping, false,
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    d->memory.Add(tracepipe::ctl::kDrainWake, 1);
    d->loop->Wake();
    std::unique_lock<std::mutex> lock(d->mutex);
    d->finished_cv.wait_for(lock, std::chrono::milliseconds(kTeardownWaitMs), [d = d] { return d->finished; });
    if (d->async != nullptr) CloseAsync(d);
    d->on_done.Reset();
    d->context.Reset();
    if (d->finished) {
      lock.unlock();
      pthread_join(d->thread, nullptr);
      delete d;
    } else {
      d->orphaned = true;
      pthread_detach(d->thread);
    }
  }
  delete drains;
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  PinThisAddon();
  v8::Isolate* isolate = context->GetIsolate();
  auto* drains = new Drains();
  drains->isolate = isolate;
  v8::Local<v8::External> data = v8::External::New(isolate, drains);
  auto method = [&](const char* name, v8::FunctionCallback f) {
    exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(), v8::FunctionTemplate::New(isolate, f, data)->GetFunction(context).ToLocalChecked())
        .Check();
  };
  method("start", Start);
  method("wakeSession", WakeSession);
  method("abandon", Abandon);
  method("join", Join);
  method("ref", Ref);
  method("layout", Layout);
  method("publishSessions", tracepipe::PublishSessions);
  method("publishedSessions", tracepipe::PublishedSessions);
  node::AddEnvironmentCleanupHook(isolate, Cleanup, drains);
}
