// tracepipe's heap snapshot stream: a V8 heap snapshot of the calling thread's isolate, serialized as
// JSON and transcoded here, as V8 writes it, into the varint bulk payloads of Runtime.HeapSnapshot's
// events (snapshot_transcoder.cc), handed to JavaScript in batches that it copies into events. The
// inspector's HeapProfiler.takeHeapSnapshot hands out the same JSON wrapped in protocol messages that
// Node parses back into strings, and leaves the parsing to JavaScript; this skips all three
// (docs/GCDUMP.md). The raw JSON chunks are available too (the benchmark's "V8 alone").
//
// Like the GC hook it uses V8's C++ API (Node-API has no heap profiler) and is built for one Node.js ABI.

#include <node.h>
#include <v8-profiler.h>
#include <v8.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "snapshot_transcoder.h"
#include "pin_addon.h"

namespace {

using tracepipe::Section;
using tracepipe::SnapshotLayout;
using tracepipe::SnapshotTranscoder;
using tracepipe::TranscoderSink;

// Larger than the inspector's 100 KB: fewer calls into JavaScript, still well inside the L2 cache.
constexpr int kChunkBytes = 256 * 1024;
// A batch of payloads handed to JavaScript at once: at least what one chunk of JSON becomes (never
// more bytes than the digits and strings it came from, plus a few length prefixes), so mostly one call per chunk.
constexpr size_t kBatchBytes = 512 * 1024;
constexpr size_t kBatchRows = 256;
// Each row of the batch's table: section, first, count, end offset in the bytes.
constexpr size_t kRowWidth = 4;
static_assert(SnapshotTranscoder::kMaxPayloadBytes <= kBatchBytes, "a payload always fits an empty batch");

// One snapshot at a time per thread: a callback that asks for another while V8 serializes gets an error.
thread_local bool busy = false;

// Memory JavaScript sees as an ArrayBuffer and this side keeps alive too, so writing into it stays
// safe even if JavaScript detaches (transfers) the ArrayBuffer.
struct SharedBuffer {
  SharedBuffer(v8::Isolate* isolate, size_t bytes)
      : store(v8::ArrayBuffer::NewBackingStore(isolate, bytes)), buffer(v8::ArrayBuffer::New(isolate, store)), data(static_cast<uint8_t*>(store->Data())) {}
  std::shared_ptr<v8::BackingStore> store;
  v8::Local<v8::ArrayBuffer> buffer;
  uint8_t* data;
};

// Hands each chunk V8 writes to `onChunk` as a Uint8Array over one reused buffer: one copy, valid only
// during the call. `onChunk` returning false stops the serialization; throwing stops it too, and the
// TryCatch around Serialize keeps the exception.
class CallbackStream final : public v8::OutputStream {
 public:
  CallbackStream(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Function> onChunk)
      : isolate_(isolate), context_(context), onChunk_(onChunk), buffer_(isolate, kChunkBytes) {}

  int GetChunkSize() override { return kChunkBytes; }
  void EndOfStream() override {}

  WriteResult WriteAsciiChunk(char* data, int size) override {
    // V8 never writes more than GetChunkSize() at once; a larger chunk would overrun the buffer.
    if (size < 0 || size > kChunkBytes) {
      isolate_->ThrowException(v8::Exception::RangeError(v8::String::NewFromUtf8Literal(isolate_, "V8 wrote a chunk larger than it was asked for")));
      return kAbort;
    }
    v8::HandleScope scope(isolate_);
    std::memcpy(buffer_.data, data, static_cast<size_t>(size));
    v8::Local<v8::Value> argv[] = {v8::Uint8Array::New(buffer_.buffer, 0, static_cast<size_t>(size))};
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
  SharedBuffer buffer_;
  bool stopped_ = false;
};

// The transcoder's output, gathered into one batch (bytes and a table of rows) and handed to
// `onPayloads(bytes, table, rows)` when full, before the header, and after each chunk of input: that
// call writes the events, parking there in a Block session, and returns whether to go on.
// `onHeader(json)` returns the layout [nodeWidth, edgeWidth, toNodeColumn, locationWidth,
// objectIndexColumn], a string saying why the header is invalid, or false to stop.
class PayloadBatch final : public TranscoderSink {
 public:
  PayloadBatch(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Function> onHeader, v8::Local<v8::Function> onPayloads)
      : isolate_(isolate), context_(context), onHeader_(onHeader), onPayloads_(onPayloads), bytes_(isolate, kBatchBytes),
        table_(isolate, kBatchRows * kRowWidth * sizeof(double)),
        bytesView_(v8::Uint8Array::New(bytes_.buffer, 0, kBatchBytes)),
        tableView_(v8::Float64Array::New(table_.buffer, 0, kBatchRows * kRowWidth)) {}

  HeaderResult Header(const std::string& json, SnapshotLayout* layout, std::string* error) override {
    if (!Flush()) return HeaderResult::kStop;
    v8::HandleScope scope(isolate_);
    v8::Local<v8::String> text;
    if (!v8::String::NewFromUtf8(isolate_, json.data(), v8::NewStringType::kNormal, static_cast<int>(json.size())).ToLocal(&text)) {
      *error = "the snapshot header is not valid JSON";
      return HeaderResult::kInvalid;
    }
    v8::Local<v8::Value> argv[] = {text};
    v8::Local<v8::Value> result;
    if (!Call(onHeader_, 1, argv, &result)) return HeaderResult::kStop;
    if (result->IsString()) {
      v8::String::Utf8Value message(isolate_, result);
      *error = *message != nullptr ? std::string(*message, static_cast<size_t>(message.length())) : "the snapshot header is invalid";
      return HeaderResult::kInvalid;
    }
    if (!result->IsArray() || result.As<v8::Array>()->Length() != 5) return HeaderResult::kStop;
    int values[5];
    for (uint32_t i = 0; i < 5; i++) {
      v8::Local<v8::Value> v;
      if (!result.As<v8::Array>()->Get(context_, i).ToLocal(&v) || !v->IsInt32()) return HeaderResult::kStop;
      values[i] = v.As<v8::Int32>()->Value();
    }
    *layout = SnapshotLayout{values[0], values[1], values[2], values[3], values[4]};
    return HeaderResult::kOk;
  }

  bool Payload(Section section, double first, double count, const uint8_t* bytes, size_t length) override {
    if ((length > kBatchBytes - used_ || rows_ == kBatchRows) && !Flush()) return false;
    std::memcpy(bytes_.data + used_, bytes, length);
    used_ += length;
    double* row = reinterpret_cast<double*>(table_.data) + rows_ * kRowWidth;
    row[0] = static_cast<double>(section);
    row[1] = first;
    row[2] = count;
    row[3] = static_cast<double>(used_);
    rows_++;
    return true;
  }

  // Hands the batch over; false when JavaScript said stop or threw (stopped for good).
  bool Flush() {
    if (stopped_) return false;
    if (rows_ == 0) return true;
    v8::HandleScope scope(isolate_);
    v8::Local<v8::Value> argv[] = {bytesView_, tableView_, v8::Integer::NewFromUnsigned(isolate_, static_cast<uint32_t>(rows_))};
    rows_ = 0;
    used_ = 0;
    v8::Local<v8::Value> result;
    if (!Call(onPayloads_, 3, argv, &result)) return false;
    if (result->IsFalse()) stopped_ = true;
    return !stopped_;
  }

 private:
  bool Call(v8::Local<v8::Function> f, int argc, v8::Local<v8::Value>* argv, v8::Local<v8::Value>* result) {
    if (f->Call(context_, v8::Undefined(isolate_), argc, argv).ToLocal(result)) return true;
    stopped_ = true;
    return false;
  }

  v8::Isolate* isolate_;
  v8::Local<v8::Context> context_;
  v8::Local<v8::Function> onHeader_;
  v8::Local<v8::Function> onPayloads_;
  SharedBuffer bytes_;
  SharedBuffer table_;
  v8::Local<v8::Uint8Array> bytesView_;
  v8::Local<v8::Float64Array> tableView_;
  size_t used_ = 0;
  size_t rows_ = 0;
  bool stopped_ = false;
};

// A transcoder and its batch: each piece of JSON is transcoded and its payloads handed over before the next.
class Transcoding {
 public:
  Transcoding(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Function> onHeader, v8::Local<v8::Function> onPayloads)
      : batch_(isolate, context, onHeader, onPayloads), transcoder_(&batch_) {}

  // False: stop (the JSON is malformed, or JavaScript said stop or threw).
  bool Feed(const uint8_t* data, size_t length) {
    const bool more = transcoder_.Push(data, length);
    // What came before a malformed byte is written too, as the JavaScript parser writes it.
    return batch_.Flush() && more;
  }

  // {error, nodes, edges, locations, strings, stringBytes, skippedValues}: error is '' when the JSON
  // was whole and well-formed; after a stop, the document ended early.
  v8::Local<v8::Object> Finish(v8::Isolate* isolate, v8::Local<v8::Context> context) {
    transcoder_.Finish();
    const std::string& error = transcoder_.error();
    v8::Local<v8::Object> result = v8::Object::New(isolate);
    const auto set = [&](const char* key, v8::Local<v8::Value> value) { result->Set(context, v8::String::NewFromUtf8(isolate, key).ToLocalChecked(), value).Check(); };
    // Latin-1, as the JavaScript parser's messages show a byte.
    set("error", v8::String::NewFromOneByte(isolate, reinterpret_cast<const uint8_t*>(error.data()), v8::NewStringType::kNormal, static_cast<int>(error.size())).ToLocalChecked());
    set("nodes", v8::Number::New(isolate, transcoder_.nodes()));
    set("edges", v8::Number::New(isolate, transcoder_.edges()));
    set("locations", v8::Number::New(isolate, transcoder_.locations()));
    set("strings", v8::Number::New(isolate, transcoder_.strings()));
    set("stringBytes", v8::Number::New(isolate, transcoder_.stringBytes()));
    set("skippedValues", v8::Number::New(isolate, transcoder_.skippedValues()));
    return result;
  }

 private:
  PayloadBatch batch_;
  SnapshotTranscoder transcoder_;
};

// V8's chunks straight into a Transcoding.
class TranscodingStream final : public v8::OutputStream {
 public:
  explicit TranscodingStream(Transcoding* transcoding) : transcoding_(transcoding) {}
  int GetChunkSize() override { return kChunkBytes; }
  void EndOfStream() override {}
  WriteResult WriteAsciiChunk(char* data, int size) override {
    if (size < 0) return kAbort;
    return transcoding_->Feed(reinterpret_cast<const uint8_t*>(data), static_cast<size_t>(size)) ? kContinue : kAbort;
  }

 private:
  Transcoding* transcoding_;
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

// Takes a snapshot of this thread's isolate and serializes it into `stream`; deletes it. False when
// it could not be taken (a JavaScript error is thrown).
bool Serialize(v8::Isolate* isolate, v8::OutputStream* stream) {
  if (busy) {
    Throw(isolate, "a heap snapshot is already being taken on this thread");
    return false;
  }
  const v8::HeapSnapshot* snapshot = isolate->GetHeapProfiler()->TakeHeapSnapshot();
  if (snapshot == nullptr) {
    Throw(isolate, "V8 could not take a heap snapshot");
    return false;
  }
  SnapshotGuard guard(snapshot);
  snapshot->Serialize(stream, v8::HeapSnapshot::kJSON);
  return true;
}

// takeHeapSnapshot(onChunk: (chunk: Uint8Array) => boolean | void): boolean
// Snapshots this thread's isolate, hands V8's JSON to onChunk, deletes the snapshot. Returns true when
// the whole JSON was handed over, false when onChunk returned false; rethrows what onChunk threw.
void TakeHeapSnapshot(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsFunction()) return Throw(isolate, "takeHeapSnapshot needs a function to hand the chunks to");
  CallbackStream stream(isolate, isolate->GetCurrentContext(), info[0].As<v8::Function>());
  {
    // The snapshot is deleted before an exception reaches JavaScript.
    v8::TryCatch tryCatch(isolate);
    if (!Serialize(isolate, &stream) || tryCatch.HasCaught()) {
      tryCatch.ReThrow();
      return;
    }
  }
  info.GetReturnValue().Set(!stream.stopped());
}

bool TranscoderCallbacks(const v8::FunctionCallbackInfo<v8::Value>& info, int at, const char* name) {
  if (info.Length() >= at + 2 && info[at]->IsFunction() && info[at + 1]->IsFunction()) return true;
  Throw(info.GetIsolate(), name);
  return false;
}

// transcodeHeapSnapshot(onHeader, onPayloads): result (Transcoding::Finish)
// Snapshots this thread's isolate and transcodes V8's JSON as it is serialized; deletes the snapshot.
// Rethrows what a callback threw.
void TranscodeHeapSnapshot(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (!TranscoderCallbacks(info, 0, "transcodeHeapSnapshot needs the header and payload functions")) return;
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  Transcoding transcoding(isolate, context, info[0].As<v8::Function>(), info[1].As<v8::Function>());
  TranscodingStream stream(&transcoding);
  {
    v8::TryCatch tryCatch(isolate);
    if (!Serialize(isolate, &stream) || tryCatch.HasCaught()) {
      tryCatch.ReThrow();
      return;
    }
  }
  info.GetReturnValue().Set(transcoding.Finish(isolate, context));
}

// transcodeJson(chunks: Uint8Array[], onHeader, onPayloads): result (Transcoding::Finish)
// The same transcoder on JSON the caller gives, chunk by chunk (what the tests feed it).
void TranscodeJson(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsArray()) return Throw(isolate, "transcodeJson needs an array of Uint8Array chunks");
  if (!TranscoderCallbacks(info, 1, "transcodeJson needs the header and payload functions")) return;
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Array> chunks = info[0].As<v8::Array>();
  Transcoding transcoding(isolate, context, info[1].As<v8::Function>(), info[2].As<v8::Function>());
  v8::TryCatch tryCatch(isolate);
  std::vector<uint8_t> chunk;
  for (uint32_t i = 0; i < chunks->Length(); i++) {
    v8::Local<v8::Value> value;
    if (!chunks->Get(context, i).ToLocal(&value)) break;
    if (!value->IsUint8Array()) {
      Throw(isolate, "transcodeJson needs an array of Uint8Array chunks");
      break;
    }
    // A copy: the callbacks run JavaScript, which could detach or resize what the view is over.
    v8::Local<v8::Uint8Array> view = value.As<v8::Uint8Array>();
    chunk.resize(view->ByteLength());
    view->CopyContents(chunk.data(), chunk.size());
    if (!transcoding.Feed(chunk.data(), chunk.size())) break;
  }
  if (tryCatch.HasCaught()) {
    tryCatch.ReThrow();
    return;
  }
  info.GetReturnValue().Set(transcoding.Finish(isolate, context));
}

// heapSnapshotCount(): the snapshots V8 holds for this isolate. 0 unless one is being taken: every
// snapshot is deleted once serialized, whatever happened (what the tests check).
void HeapSnapshotCount(const v8::FunctionCallbackInfo<v8::Value>& info) {
  info.GetReturnValue().Set(info.GetIsolate()->GetHeapProfiler()->GetSnapshotCount());
}

void Export(v8::Local<v8::Context> context, v8::Local<v8::Object> exports, const char* name, v8::FunctionCallback f) {
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(), v8::FunctionTemplate::New(isolate, f)->GetFunction(context).ToLocalChecked()).Check();
}

}  // namespace

// Context-aware: a worker thread that loads it snapshots its own isolate.
NODE_MODULE_INIT(/* exports, module, context */) {
  PinThisAddon();
  Export(context, exports, "takeHeapSnapshot", TakeHeapSnapshot);
  Export(context, exports, "transcodeHeapSnapshot", TranscodeHeapSnapshot);
  Export(context, exports, "transcodeJson", TranscodeJson);
  Export(context, exports, "heapSnapshotCount", HeapSnapshotCount);
}
