// tracepipe's view of the main thread's event loop from another thread: libuv's idle time, the time the
// loop has spent waiting in its poll (what Node's eventLoopUtilization reads). libuv guards it with a
// mutex so that any thread may read it (uv_metrics_idle_time locks loop_metrics->lock, and adds the
// poll under way, if any), which lets the stall watchdog ask "has the main thread left its rest, and
// since when?" with no file read and no allocation.
//
// The loop is the one of the thread that calls watchThisLoop() (the main thread, as its watchdog
// starts): Node's own loop for that isolate, not assumed to be uv_default_loop().

#include <node.h>
#include <uv.h>
#include <v8.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include "pin_addon.h"

namespace {

// The watched loop, shared by every isolate that loads this addon (it is read from the watchdog's).
std::atomic<uv_loop_t*> watched{nullptr};

// A reading: f64 idle time (ms), f64 when it was read (ms, uv_hrtime), f64 1 while the loop is in its poll.
constexpr size_t kReadingValues = 3;

// The turn meter: a prepare handle on its thread's loop, which libuv runs as each turn ends (before the
// poll): the turn's work is the time since the last one less the loop's idle time in it. The first
// turn whose work reaches the threshold stops it and calls back with the work's length, in that thread:
// a resting loop sampler learns that its loop woke, and for how long it was busy, from the thread
// itself, with no other thread polling it and no JavaScript run for turns below the threshold.
struct TurnMeter {
  uv_prepare_t handle;
  v8::Isolate* isolate = nullptr;
  v8::Global<v8::Context> context;
  v8::Global<v8::Function> callback;
  uint64_t atNs = 0;
  uint64_t idleNs = 0;
  uint64_t thresholdNs = 0;
  // Work of the turn under way that is not counted (the thread's own timer's).
  uint64_t discountNs = 0;
  bool running = false;
  // Closes the handle as the environment ends, and holds the end until libuv has let go of it: Node
  // unloads this library after its environment's cleanup, and the close callback is code of it.
  node::AsyncCleanupHookHandle cleanup;
  void (*cleanupDone)(void*) = nullptr;
  void* cleanupDoneArg = nullptr;
};

struct Reader {
  std::shared_ptr<v8::BackingStore> store;
  double* out = nullptr;
  // The loop this isolate's thread put up for watching, if it did.
  uv_loop_t* own = nullptr;
  // The heartbeat this isolate's thread (the watchdog) sleeps on.
  std::shared_ptr<v8::BackingStore> heartbeat;
  // This thread's turn meter, once armed.
  TurnMeter* meter = nullptr;
};

void Throw(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

// watchThisLoop(): the calling thread's loop is the one read from now on.
void WatchThisLoop(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Reader* reader = static_cast<Reader*>(info.Data().As<v8::External>()->Value());
  reader->own = node::GetCurrentEventLoop(info.GetIsolate());
  watched.store(reader->own, std::memory_order_release);
}

// bind(out: Float64Array): where this isolate's readings go (kept, so that a reading allocates nothing).
void Bind(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  Reader* reader = static_cast<Reader*>(info.Data().As<v8::External>()->Value());
  if (info.Length() < 1 || !info[0]->IsFloat64Array()) return Throw(isolate, "bind needs a Float64Array");
  v8::Local<v8::Float64Array> array = info[0].As<v8::Float64Array>();
  if (array->Length() < kReadingValues) return Throw(isolate, "the Float64Array needs room for a reading (3 values)");
  reader->store = array->Buffer()->GetBackingStore();
  reader->out = reinterpret_cast<double*>(static_cast<uint8_t*>(reader->store->Data()) + array->ByteOffset());
}

// read(): true with a reading in the bound array; false when no loop is watched or nothing is bound.
void Read(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Reader* reader = static_cast<Reader*>(info.Data().As<v8::External>()->Value());
  uv_loop_t* loop = watched.load(std::memory_order_acquire);
  if (loop == nullptr || reader->out == nullptr) return info.GetReturnValue().Set(false);
  // In its poll, the idle time grows with the clock; out of it, it stands still: two readings tell which.
  const uint64_t before = uv_metrics_idle_time(loop);
  const uint64_t at = uv_hrtime();
  const uint64_t idle = uv_metrics_idle_time(loop);
  reader->out[0] = static_cast<double>(idle) / 1e6;
  reader->out[1] = static_cast<double>(at) / 1e6;
  reader->out[2] = idle != before ? 1 : 0;
  info.GetReturnValue().Set(true);
}

// The heartbeat's layout (src/providers/event-loop/heartbeat.ts; keep both in step): 32-bit words,
// then float64s, in one SharedArrayBuffer.
enum HeartbeatWord : size_t { kWake = 3, kResting = 6, kPolls = 9 };
enum HeartbeatF64 : size_t { kRestSinceMs = 10, kRestIdleMs = 14 };
constexpr size_t kHeartbeatBytes = 120;

// watchHeartbeat(sab): the heartbeat sleepWhileResting() reads.
void WatchHeartbeat(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  Reader* reader = static_cast<Reader*>(info.Data().As<v8::External>()->Value());
  if (info.Length() < 1 || !info[0]->IsSharedArrayBuffer()) return Throw(isolate, "watchHeartbeat needs a SharedArrayBuffer");
  std::shared_ptr<v8::BackingStore> store = info[0].As<v8::SharedArrayBuffer>()->GetBackingStore();
  if (store->ByteLength() < kHeartbeatBytes) return Throw(isolate, "the heartbeat is too small");
  reader->heartbeat = store;
}

// sleepWhileResting(seen, pollMs, maxMs, tailMs): the watchdog's rest check in a loop of its own, so
// that a poll of a resting loop wakes no JavaScript: every pollMs it counts a poll and reads the
// watched loop against the baseline its thread left in the heartbeat. Returns once the thread has
// left its rest (lost more than tailMs of idle time), stopped resting, the heartbeat's wake count is
// no longer `seen` (a stop, a new setting: seen within a poll), or after maxMs.
void SleepWhileResting(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Reader* reader = static_cast<Reader*>(info.Data().As<v8::External>()->Value());
  uv_loop_t* loop = watched.load(std::memory_order_acquire);
  if (loop == nullptr || !reader->heartbeat || info.Length() < 4) return;
  v8::Local<v8::Context> context = info.GetIsolate()->GetCurrentContext();
  const int32_t seen = info[0]->Int32Value(context).FromMaybe(0);
  const double pollMs = info[1]->NumberValue(context).FromMaybe(0);
  const double maxMs = info[2]->NumberValue(context).FromMaybe(0);
  const double tailMs = info[3]->NumberValue(context).FromMaybe(0);
  if (!(pollMs >= 1) || !(maxMs >= 0)) return;
  auto* words = static_cast<std::atomic<int32_t>*>(reader->heartbeat->Data());
  auto* f64 = static_cast<volatile double*>(reader->heartbeat->Data());
  for (double leftMs = maxMs; leftMs > 0; leftMs -= pollMs) {
    uv_sleep(static_cast<unsigned int>(std::min(pollMs, leftMs)));
    if (words[kWake].load(std::memory_order_seq_cst) != seen || words[kResting].load(std::memory_order_seq_cst) == 0) return;
    words[kPolls].fetch_add(1, std::memory_order_seq_cst);
    const double idleMs = static_cast<double>(uv_metrics_idle_time(loop)) / 1e6;
    const double atMs = static_cast<double>(uv_hrtime()) / 1e6;
    if (atMs - f64[kRestSinceMs] - (idleMs - f64[kRestIdleMs]) >= tailMs) return;
  }
}

// A new baseline: what the thread did before now is not the next turn's work.
void Rebase(TurnMeter* meter) {
  meter->atNs = uv_hrtime();
  meter->idleNs = uv_metrics_idle_time(meter->handle.loop);
  meter->discountNs = 0;
}

void Stop(TurnMeter* meter) {
  if (meter->running) uv_prepare_stop(&meter->handle);
  meter->running = false;
  // Nothing of the caller's is kept while it is not armed.
  meter->callback.Reset();
  meter->context.Reset();
}

void CloseTurnMeter(void* data, void (*done)(void*), void* doneArg) {
  TurnMeter* meter = static_cast<TurnMeter*>(data);
  Stop(meter);
  meter->cleanupDone = done;
  meter->cleanupDoneArg = doneArg;
  uv_close(reinterpret_cast<uv_handle_t*>(&meter->handle), [](uv_handle_t* h) {
    TurnMeter* closed = static_cast<TurnMeter*>(h->data);
    void (*finished)(void*) = closed->cleanupDone;
    void* arg = closed->cleanupDoneArg;
    delete closed;
    finished(arg);
  });
}

void OnTurnEnd(uv_prepare_t* handle) {
  TurnMeter* meter = static_cast<TurnMeter*>(handle->data);
  const uint64_t at = uv_hrtime();
  const uint64_t idle = uv_metrics_idle_time(handle->loop);
  const uint64_t elapsed = at - meter->atNs;
  const uint64_t idled = idle - meter->idleNs;
  const uint64_t spent = elapsed > idled ? elapsed - idled : 0;
  const uint64_t busy = spent > meter->discountNs ? spent - meter->discountNs : 0;
  meter->atNs = at;
  meter->idleNs = idle;
  meter->discountNs = 0;
  if (busy < meter->thresholdNs) return;
  v8::Isolate* isolate = meter->isolate;
  v8::HandleScope scope(isolate);
  v8::Local<v8::Context> context = meter->context.Get(isolate);
  v8::Local<v8::Function> callback = meter->callback.Get(isolate);
  Stop(meter);
  v8::Context::Scope context_scope(context);
  v8::Local<v8::Value> argv[] = {v8::Number::New(isolate, static_cast<double>(busy) / 1e6)};
  // As Node calls back from its own handles: microtasks and process.nextTick run after it.
  (void)node::MakeCallback(isolate, context->Global(), callback, 1, argv, node::async_context{0, 0});
}

// Thresholds and discounts are whole milliseconds' worth of nanoseconds up to an hour: a larger or
// non-finite one would not convert.
constexpr double kLongestMs = 3600e3;

// armTurnMeter(thresholdMs, callback): from now on, the first turn of this thread's loop whose work
// reaches thresholdMs calls callback(workMs) as it ends, once (arm it again for the next).
void ArmTurnMeter(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  Reader* reader = static_cast<Reader*>(info.Data().As<v8::External>()->Value());
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  const double thresholdMs = info.Length() < 1 ? -1 : info[0]->NumberValue(context).FromMaybe(-1);
  if (!(thresholdMs >= 0 && thresholdMs <= kLongestMs) || info.Length() < 2 || !info[1]->IsFunction()) {
    return Throw(isolate, "armTurnMeter needs a threshold (0 to 3,600,000 ms) and a function");
  }
  TurnMeter* meter = reader->meter;
  if (meter == nullptr) {
    meter = reader->meter = new TurnMeter();
    meter->isolate = isolate;
    uv_prepare_init(node::GetCurrentEventLoop(isolate), &meter->handle);
    meter->handle.data = meter;
    // It never keeps the loop alive.
    uv_unref(reinterpret_cast<uv_handle_t*>(&meter->handle));
    meter->cleanup = node::AddEnvironmentCleanupHook(isolate, CloseTurnMeter, meter);
  }
  meter->context.Reset(isolate, context);
  meter->callback.Reset(isolate, info[1].As<v8::Function>());
  meter->thresholdNs = static_cast<uint64_t>(thresholdMs * 1e6);
  Rebase(meter);
  if (!meter->running) uv_prepare_start(&meter->handle, OnTurnEnd);
  meter->running = true;
}

// discountTurnMeter(ms): that much of the turn under way is not counted (the thread's own timer ran
// for it); the rest of the turn's work, before and after, is.
void DiscountTurnMeter(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Reader* reader = static_cast<Reader*>(info.Data().As<v8::External>()->Value());
  const double ms = info.Length() < 1 ? -1 : info[0]->NumberValue(info.GetIsolate()->GetCurrentContext()).FromMaybe(-1);
  if (!(ms >= 0 && ms <= kLongestMs)) return Throw(info.GetIsolate(), "discountTurnMeter needs a duration (0 to 3,600,000 ms)");
  if (reader->meter != nullptr && reader->meter->running) reader->meter->discountNs += static_cast<uint64_t>(ms * 1e6);
}

// disarmTurnMeter(): no callback until armed again.
void DisarmTurnMeter(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Reader* reader = static_cast<Reader*>(info.Data().As<v8::External>()->Value());
  if (reader->meter != nullptr) Stop(reader->meter);
}

void Cleanup(void* data) {
  Reader* reader = static_cast<Reader*>(data);
  // The watched loop ends with its thread's environment: nothing reads it after that.
  if (reader->own != nullptr) {
    uv_loop_t* own = reader->own;
    watched.compare_exchange_strong(own, nullptr, std::memory_order_acq_rel);
  }
  delete reader;
}

}  // namespace

// Context-aware: the main thread captures its loop, and the watchdog's worker reads it.
NODE_MODULE_INIT(/* exports, module, context */) {
  PinThisAddon();
  v8::Isolate* isolate = context->GetIsolate();
  Reader* reader = new Reader();
  node::AddEnvironmentCleanupHook(isolate, Cleanup, reader);
  v8::Local<v8::External> data = v8::External::New(isolate, reader);
  auto method = [&](const char* name, v8::FunctionCallback fn) {
    exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(), v8::FunctionTemplate::New(isolate, fn, data)->GetFunction(context).ToLocalChecked()).Check();
  };
  method("watchThisLoop", WatchThisLoop);
  method("bind", Bind);
  method("read", Read);
  method("watchHeartbeat", WatchHeartbeat);
  method("sleepWhileResting", SleepWhileResting);
  method("armTurnMeter", ArmTurnMeter);
  method("discountTurnMeter", DiscountTurnMeter);
  method("disarmTurnMeter", DisarmTurnMeter);
}
