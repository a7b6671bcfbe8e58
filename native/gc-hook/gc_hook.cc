// tracepipe's GC hook: V8's GC prologue/epilogue callbacks record every pause of this thread's
// isolate, as it happens, into a ring in a SharedArrayBuffer. Node's perf_hooks hands pauses to
// JavaScript only when the event loop turns; this ring holds them whatever the loop does, so they can
// be read synchronously at exit, or by another thread while this one is blocked.
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

namespace {

constexpr size_t kHeaderBytes = 64;
// A record: f64 start (ns, uv_hrtime), f64 duration (ns), f64 heap used after (bytes), f64 preemptions
// (NaN when unknown), u32 GCType, u32 GCCallbackFlags.
constexpr size_t kRecordBytes = 40;
// 32-bit words of the header. Counts are free-running (they wrap); the capacity is a power of two.
// Words 2 (who is taking) and 5 (loss already reported) belong to the JavaScript side.
enum Word : size_t { kWritten = 0, kTaken = 1, kLost = 3, kCapacity = 4 };
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
};

void OnPrologue(v8::Isolate*, v8::GCType type, v8::GCCallbackFlags, void* data) {
  Hook* hook = static_cast<Hook*>(data);
  if (hook->depth < kMaxDepth) {
    OpenPause& p = hook->open[hook->depth];
    p.type = static_cast<uint32_t>(type);
    p.switches = Preemptions();
    // Last, so the clock reads as close to the pause as this callback can.
    p.startNs = uv_hrtime();
  }
  hook->depth++;
}

void OnEpilogue(v8::Isolate* isolate, v8::GCType, v8::GCCallbackFlags flags, void* data) {
  // First, so the clock reads as close to the pause as this callback can.
  const uint64_t endNs = uv_hrtime();
  const double switches = Preemptions();
  Hook* hook = static_cast<Hook*>(data);
  if (hook->depth == 0) return;
  hook->depth--;
  std::atomic<uint32_t>* words = hook->words;
  if (hook->depth >= kMaxDepth) {
    words[kLost].fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const OpenPause& p = hook->open[hook->depth];
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

// Stops recording; the ring keeps what it holds.
void Unregister(Hook* hook) {
  if (!hook->registered) return;
  hook->isolate->RemoveGCPrologueCallback(OnPrologue, hook);
  hook->isolate->RemoveGCEpilogueCallback(OnEpilogue, hook);
  hook->registered = false;
  hook->words = nullptr;
  hook->records = nullptr;
  hook->store.reset();
}

void Throw(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

// attach(ring: SharedArrayBuffer): records this isolate's pauses into `ring` from now on.
void Attach(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  Hook* hook = static_cast<Hook*>(info.Data().As<v8::External>()->Value());
  if (info.Length() < 1 || !info[0]->IsSharedArrayBuffer()) return Throw(isolate, "attach needs a SharedArrayBuffer");
  std::shared_ptr<v8::BackingStore> store = info[0].As<v8::SharedArrayBuffer>()->GetBackingStore();
  if (store->ByteLength() < kHeaderBytes) return Throw(isolate, "ring too small");
  auto* words = static_cast<std::atomic<uint32_t>*>(store->Data());
  const uint32_t capacity = words[kCapacity].load(std::memory_order_relaxed);
  if (capacity == 0 || (capacity & (capacity - 1)) != 0 || store->ByteLength() < kHeaderBytes + capacity * kRecordBytes) {
    return Throw(isolate, "ring capacity must be a power of two that fits the buffer");
  }
  Unregister(hook);
  hook->store = store;
  hook->words = words;
  hook->records = static_cast<uint8_t*>(store->Data()) + kHeaderBytes;
  hook->mask = capacity - 1;
  hook->depth = 0;
  isolate->AddGCPrologueCallback(OnPrologue, hook);
  isolate->AddGCEpilogueCallback(OnEpilogue, hook);
  hook->registered = true;
}

// detach(): stops recording; the ring keeps what it holds.
void Detach(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Unregister(static_cast<Hook*>(info.Data().As<v8::External>()->Value()));
}

void Cleanup(void* data) {
  Hook* hook = static_cast<Hook*>(data);
  Unregister(hook);
  delete hook;
}

}  // namespace

// Context-aware, so each worker thread that loads it gets its own hook for its own isolate.
NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  Hook* hook = new Hook();
  hook->isolate = isolate;
  node::AddEnvironmentCleanupHook(isolate, Cleanup, hook);
  v8::Local<v8::External> data = v8::External::New(isolate, hook);
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "attach"), v8::FunctionTemplate::New(isolate, Attach, data)->GetFunction(context).ToLocalChecked()).Check();
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "detach"), v8::FunctionTemplate::New(isolate, Detach, data)->GetFunction(context).ToLocalChecked()).Check();
}
