// tracepipe's heap snapshot stream: a V8 heap snapshot of the calling thread's isolate, serialized as
// JSON straight into a JavaScript callback, chunk by chunk, as bytes. The inspector's
// HeapProfiler.takeHeapSnapshot hands out the same chunks wrapped in protocol messages that Node
// parses back into strings; this skips both (docs/GCDUMP.md).
//
// Like the GC hook it uses V8's C++ API (Node-API has no heap profiler) and is built for one Node.js ABI.

#include <node.h>
#include <v8-profiler.h>
#include <v8.h>

#include <cstring>

namespace {

// Larger than the inspector's 100 KB: fewer calls into JavaScript, still well inside the L2 cache.
constexpr int kChunkBytes = 256 * 1024;

// One snapshot at a time per thread: a callback that asks for another while V8 serializes gets an error.
thread_local bool busy = false;

// Hands each chunk V8 writes to `onChunk` as a Uint8Array over one reused buffer: one copy, valid only
// during the call. `onChunk` returning false stops the serialization; throwing stops it too, and the
// TryCatch around Serialize keeps the exception.
class CallbackStream final : public v8::OutputStream {
 public:
  CallbackStream(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Function> onChunk)
      : isolate_(isolate), context_(context), onChunk_(onChunk), buffer_(v8::ArrayBuffer::New(isolate, kChunkBytes)) {}

  int GetChunkSize() override { return kChunkBytes; }
  void EndOfStream() override {}

  WriteResult WriteAsciiChunk(char* data, int size) override {
    // V8 never writes more than GetChunkSize() at once; a larger chunk would overrun the buffer.
    if (size < 0 || size > kChunkBytes) {
      isolate_->ThrowException(v8::Exception::RangeError(v8::String::NewFromUtf8Literal(isolate_, "V8 wrote a chunk larger than it was asked for")));
      return kAbort;
    }
    v8::HandleScope scope(isolate_);
    std::memcpy(buffer_->Data(), data, static_cast<size_t>(size));
    v8::Local<v8::Value> argv[] = {v8::Uint8Array::New(buffer_, 0, static_cast<size_t>(size))};
    v8::Local<v8::Value> result;
    if (!onChunk_->Call(context_, v8::Undefined(isolate_), 1, argv).ToLocal(&result)) return kAbort;
    if (result->IsFalse()) {
      stopped_ = true;
      return kAbort;
    }
    return kContinue;
  }

  bool stopped() const { return stopped_; }

 private:
  v8::Isolate* isolate_;
  v8::Local<v8::Context> context_;
  v8::Local<v8::Function> onChunk_;
  v8::Local<v8::ArrayBuffer> buffer_;
  bool stopped_ = false;
};

// Deletes the snapshot and frees the thread for the next one, however Serialize ended.
class SnapshotGuard {
 public:
  explicit SnapshotGuard(const v8::HeapSnapshot* snapshot) : snapshot_(snapshot) { busy = true; }
  ~SnapshotGuard() {
    const_cast<v8::HeapSnapshot*>(snapshot_)->Delete();
    busy = false;
  }
  SnapshotGuard(const SnapshotGuard&) = delete;
  SnapshotGuard& operator=(const SnapshotGuard&) = delete;

 private:
  const v8::HeapSnapshot* snapshot_;
};

void Throw(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::Error(v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

// takeHeapSnapshot(onChunk: (chunk: Uint8Array) => boolean | void): boolean
// Snapshots this thread's isolate, hands V8's JSON to onChunk, deletes the snapshot. Returns true when
// the whole JSON was handed over, false when onChunk returned false; rethrows what onChunk threw.
void TakeHeapSnapshot(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsFunction()) return Throw(isolate, "takeHeapSnapshot needs a function to hand the chunks to");
  if (busy) return Throw(isolate, "a heap snapshot is already being taken on this thread");
  const v8::HeapSnapshot* snapshot = isolate->GetHeapProfiler()->TakeHeapSnapshot();
  if (snapshot == nullptr) return Throw(isolate, "V8 could not take a heap snapshot");
  bool stopped;
  {
    SnapshotGuard guard(snapshot);
    CallbackStream stream(isolate, isolate->GetCurrentContext(), info[0].As<v8::Function>());
    v8::TryCatch tryCatch(isolate);
    snapshot->Serialize(&stream, v8::HeapSnapshot::kJSON);
    stopped = stream.stopped();
    // The guard deletes the snapshot before the exception reaches JavaScript.
    if (tryCatch.HasCaught()) {
      tryCatch.ReThrow();
      return;
    }
  }
  info.GetReturnValue().Set(!stopped);
}

// heapSnapshotCount(): the snapshots V8 holds for this isolate. 0 unless one is being taken: every
// snapshot is deleted once serialized, whatever happened (what the tests check).
void HeapSnapshotCount(const v8::FunctionCallbackInfo<v8::Value>& info) {
  info.GetReturnValue().Set(info.GetIsolate()->GetHeapProfiler()->GetSnapshotCount());
}

}  // namespace

// Context-aware: a worker thread that loads it snapshots its own isolate.
NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "takeHeapSnapshot"), v8::FunctionTemplate::New(isolate, TakeHeapSnapshot)->GetFunction(context).ToLocalChecked()).Check();
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "heapSnapshotCount"), v8::FunctionTemplate::New(isolate, HeapSnapshotCount)->GetFunction(context).ToLocalChecked()).Check();
}
