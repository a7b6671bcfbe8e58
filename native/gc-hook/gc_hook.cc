// tracepipe's GC hook: V8's GC prologue/epilogue callbacks record every pause of this thread's
// isolate, as it happens, into a ring in a SharedArrayBuffer. Node's perf_hooks hands pauses to
// JavaScript only when the event loop turns; this ring holds them whatever the loop does, so they can
// be read synchronously at exit, or by another thread while this one is blocked.
//
// It also tells JavaScript that pauses are waiting, without perf_hooks: perf_hooks builds an entry
// object and schedules an immediate for every pause, which costs the loop more than the pause record
// itself (hundreds a second under load). The hook rings a doorbell (a uv_async on this thread's
// loop) when JavaScript has armed it, at most once per arming, and for every mark-compact.
//
// Node-API has no GC callbacks, so this uses V8's C++ API and is built for one Node.js ABI.
// The ring's layout is shared with src/providers/gc-ring.ts; keep both in step.

#include <node.h>
#include <uv.h>
#include <v8.h>

#if defined(__linux__)
#include <sys/resource.h>
#endif

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include "pin_addon.h"

namespace {

constexpr size_t kHeaderBytes = 64;
// A record: f64 start (ns, uv_hrtime), f64 duration (ns), f64 heap used after (bytes), f64 preemptions
// (NaN when unknown), u32 GCType, u32 GCCallbackFlags.
constexpr size_t kRecordBytes = 40;
// 32-bit words of the header. Counts are free-running (they wrap); the capacity is a power of two.
// Words 2 (who is taking) and 5 (loss already reported) belong to the JavaScript side. JavaScript
// sets kRecord (1: pauses are recorded) and kArmed (1: ring at the next pause); the hook clears
// kArmed when it rings and counts mark-compacts in kMarkCompacts.
enum Word : size_t { kWritten = 0, kTaken = 1, kLost = 3, kCapacity = 4, kRecord = 6, kArmed = 7, kMarkCompacts = 8 };
// Pauses can nest (a callback may itself trigger a GC); deeper ones are counted as lost.
constexpr int kMaxDepth = 8;

struct OpenPause {
  uint32_t type;
  uint64_t startNs;
  double switches;
};

// Involuntary context switches of the calling thread so far: the OS gave the CPU to someone else.
// NaN where the platform cannot say per thread.
double Preemptions() {
#if defined(__linux__) && defined(RUSAGE_THREAD)
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) == 0) return static_cast<double>(usage.ru_nivcsw);
#endif
  return NAN;
}

struct Hook {
  v8::Isolate* isolate = nullptr;
  std::shared_ptr<v8::BackingStore> store;
  std::atomic<uint32_t>* words = nullptr;
  uint8_t* records = nullptr;
  uint32_t mask = 0;
  bool registered = false;
  int depth = 0;
  OpenPause open[kMaxDepth];
  // The doorbell: its handle (closed with the hook) and what it calls on this thread.
  uv_async_t* async = nullptr;
  v8::Global<v8::Context> context;
  v8::Global<v8::Function> doorbell;
};

bool Recording(const Hook* hook) {
  return hook->words[kRecord].load(std::memory_order_relaxed) != 0;
}

void OnPrologue(v8::Isolate*, v8::GCType type, v8::GCCallbackFlags, void* data) {
  Hook* hook = static_cast<Hook*>(data);
  if (hook->depth < kMaxDepth && Recording(hook)) {
    OpenPause& p = hook->open[hook->depth];
    p.type = static_cast<uint32_t>(type);
    p.switches = Preemptions();
    // Last, so the clock reads as close to the pause as this callback can.
    p.startNs = uv_hrtime();
  }
  hook->depth++;
}

// Appends the pause that just ended to the ring.
void Record(Hook* hook, v8::Isolate* isolate, const OpenPause& p, uint64_t endNs, double switches, v8::GCCallbackFlags flags) {
  std::atomic<uint32_t>* words = hook->words;
  const uint32_t written = words[kWritten].load(std::memory_order_relaxed);
  const uint32_t taken = words[kTaken].load(std::memory_order_acquire);
  if (written - taken > hook->mask) {
    // Full: nobody has taken pauses for a whole ring. Counted, never overwritten.
    words[kLost].fetch_add(1, std::memory_order_relaxed);
    return;
  }
  v8::HeapStatistics heap;
  isolate->GetHeapStatistics(&heap);
  const double numbers[4] = {static_cast<double>(p.startNs), static_cast<double>(endNs - p.startNs), static_cast<double>(heap.used_heap_size()), switches - p.switches};
  const uint32_t codes[2] = {p.type, static_cast<uint32_t>(flags)};
  uint8_t* record = hook->records + static_cast<size_t>(written & hook->mask) * kRecordBytes;
  std::memcpy(record, numbers, sizeof numbers);
  std::memcpy(record + sizeof numbers, codes, sizeof codes);
  words[kWritten].store(written + 1, std::memory_order_release);
}

void OnEpilogue(v8::Isolate* isolate, v8::GCType type, v8::GCCallbackFlags flags, void* data) {
  Hook* hook = static_cast<Hook*>(data);
  if (hook->depth == 0) return;
  hook->depth--;
  std::atomic<uint32_t>* words = hook->words;
  if (Recording(hook)) {
    // First, so the clock reads as close to the pause as this callback can.
    const uint64_t endNs = uv_hrtime();
    const double switches = Preemptions();
    if (hook->depth >= kMaxDepth) words[kLost].fetch_add(1, std::memory_order_relaxed);
    else Record(hook, isolate, hook->open[hook->depth], endNs, switches, flags);
  }
  const bool markCompact = (type & v8::kGCTypeMarkSweepCompact) != 0;
  if (markCompact) words[kMarkCompacts].fetch_add(1, std::memory_order_relaxed);
  // uv_async_send is safe anywhere, inside a pause included; the loop runs the doorbell when it turns.
  if (hook->async != nullptr && (words[kArmed].exchange(0, std::memory_order_relaxed) != 0 || markCompact)) uv_async_send(hook->async);
}

void Ring(uv_async_t* handle) {
  Hook* hook = static_cast<Hook*>(handle->data);
  if (hook == nullptr || hook->doorbell.IsEmpty()) return;
  v8::Isolate* isolate = hook->isolate;
  v8::HandleScope scope(isolate);
  v8::Local<v8::Context> context = hook->context.Get(isolate);
  v8::Context::Scope contextScope(context);
  // MakeCallback: microtasks and an uncaught exception are handled as for any callback from the loop.
  node::MakeCallback(isolate, context->Global(), hook->doorbell.Get(isolate), 0, nullptr, node::async_context{0, 0});
}

void CloseDoorbell(Hook* hook) {
  hook->doorbell.Reset();
  hook->context.Reset();
  if (hook->async == nullptr) return;
  hook->async->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(hook->async), [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
  hook->async = nullptr;
}

// Unhooks and closes the doorbell; the ring keeps what it holds.
void Unregister(Hook* hook) {
  if (!hook->registered) return;
  hook->isolate->RemoveGCPrologueCallback(OnPrologue, hook);
  hook->isolate->RemoveGCEpilogueCallback(OnEpilogue, hook);
  hook->registered = false;
  CloseDoorbell(hook);
  hook->words = nullptr;
  hook->records = nullptr;
  hook->store.reset();
}

void Throw(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

// attach(ring: SharedArrayBuffer, doorbell: () => void): hooks this isolate's pauses to `ring` from
// now on (recorded while its kRecord word is set); `doorbell` is called when the loop turns after the
// hook rang.
void Attach(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  Hook* hook = static_cast<Hook*>(info.Data().As<v8::External>()->Value());
  if (info.Length() < 2 || !info[0]->IsSharedArrayBuffer() || !info[1]->IsFunction()) return Throw(isolate, "attach needs a SharedArrayBuffer and a doorbell function");
  uv_loop_t* loop = node::GetCurrentEventLoop(isolate);
  if (loop == nullptr) return Throw(isolate, "this thread has no event loop");
  std::shared_ptr<v8::BackingStore> store = info[0].As<v8::SharedArrayBuffer>()->GetBackingStore();
  if (store->ByteLength() < kHeaderBytes) return Throw(isolate, "ring too small");
  auto* words = static_cast<std::atomic<uint32_t>*>(store->Data());
  const uint32_t capacity = words[kCapacity].load(std::memory_order_relaxed);
  if (capacity == 0 || (capacity & (capacity - 1)) != 0 || store->ByteLength() < kHeaderBytes + capacity * kRecordBytes) {
    return Throw(isolate, "ring capacity must be a power of two that fits the buffer");
  }
  Unregister(hook);
  auto* async = new uv_async_t();
  if (uv_async_init(loop, async, Ring) != 0) {
    delete async;
    return Throw(isolate, "could not open the doorbell on this thread's loop");
  }
  async->data = hook;
  // The doorbell never keeps the thread alive.
  uv_unref(reinterpret_cast<uv_handle_t*>(async));
  hook->async = async;
  hook->store = store;
  hook->words = words;
  hook->records = static_cast<uint8_t*>(store->Data()) + kHeaderBytes;
  hook->mask = capacity - 1;
  hook->depth = 0;
  hook->context.Reset(isolate, isolate->GetCurrentContext());
  hook->doorbell.Reset(isolate, info[1].As<v8::Function>());
  isolate->AddGCPrologueCallback(OnPrologue, hook);
  isolate->AddGCEpilogueCallback(OnEpilogue, hook);
  hook->registered = true;
}

// detach(): unhooks; the ring keeps what it holds.
void Detach(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Unregister(static_cast<Hook*>(info.Data().As<v8::External>()->Value()));
}

// heapStatistics(out): this isolate's heap statistics, what v8.getHeapStatistics() reads, into a
// Float64Array(7): used, total, limit, external, malloced, native contexts, detached contexts.
// node:v8 loads node:stream and ~25 more of Node's modules (~2 ms of a startup session, whose
// Runtime.GCHeap takes a first sample, BENCHMARKS.md §42).
void HeapStatistics(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsFloat64Array() || info[0].As<v8::Float64Array>()->Length() < 7) {
    isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8Literal(isolate, "heapStatistics(Float64Array(7))")));
    return;
  }
  v8::HeapStatistics s;
  isolate->GetHeapStatistics(&s);
  v8::Local<v8::Float64Array> out = info[0].As<v8::Float64Array>();
  double* d = reinterpret_cast<double*>(static_cast<uint8_t*>(out->Buffer()->Data()) + out->ByteOffset());
  d[0] = static_cast<double>(s.used_heap_size());
  d[1] = static_cast<double>(s.total_heap_size());
  d[2] = static_cast<double>(s.heap_size_limit());
  d[3] = static_cast<double>(s.external_memory());
  d[4] = static_cast<double>(s.malloced_memory());
  d[5] = static_cast<double>(s.number_of_native_contexts());
  d[6] = static_cast<double>(s.number_of_detached_contexts());
}

void Cleanup(void* data) {
  Hook* hook = static_cast<Hook*>(data);
  Unregister(hook);
  delete hook;
}

}  // namespace

// Context-aware, so each worker thread that loads it gets its own hook for its own isolate.
NODE_MODULE_INIT(/* exports, module, context */) {
  PinThisAddon();
  v8::Isolate* isolate = context->GetIsolate();
  Hook* hook = new Hook();
  hook->isolate = isolate;
  node::AddEnvironmentCleanupHook(isolate, Cleanup, hook);
  v8::Local<v8::External> data = v8::External::New(isolate, hook);
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "attach"), v8::FunctionTemplate::New(isolate, Attach, data)->GetFunction(context).ToLocalChecked()).Check();
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "detach"), v8::FunctionTemplate::New(isolate, Detach, data)->GetFunction(context).ToLocalChecked()).Check();
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "heapStatistics"), v8::FunctionTemplate::New(isolate, HeapStatistics)->GetFunction(context).ToLocalChecked()).Check();
}
