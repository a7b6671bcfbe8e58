// A checksum of a code cache's bytes, for src/bundle-script.ts. V8 checks that a code cache
// was made by its own version under the same flags, but in release builds not that its bytes are
// whole: a damaged one aborts the process as it deserializes. So each cache file carries this sum of
// its bytes, checked before V8 sees them; 64-bit words, each multiplied in, ~0.1 ms for the ~330 KB of
// a session's bundles, where hashing them in JavaScript as they load took 2.2-2.5 ms per 100 KB.

#include <node.h>
#include <v8.h>

#include <cstdint>
#include <cstring>
#include "pin_addon.h"

namespace {

uint64_t Sum(const uint8_t* data, size_t length) {
  uint64_t h = 0xcbf29ce484222325ull ^ length;
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < length; i++) h = (h ^ data[i]) * 0x100000001b3ull;
  return h ^ (h >> 32);
}

// checksum(bytes): the sum of a Uint8Array's bytes, as a number below 2^32.
void Checksum(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsUint8Array()) {
    isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8Literal(isolate, "checksum needs a Uint8Array")));
    return;
  }
  v8::Local<v8::Uint8Array> bytes = info[0].As<v8::Uint8Array>();
  const uint8_t* base = static_cast<const uint8_t*>(bytes->Buffer()->Data()) + bytes->ByteOffset();
  info.GetReturnValue().Set(static_cast<uint32_t>(Sum(base, bytes->ByteLength())));
}

}  // namespace

// Context-aware: worker threads that import tracepipe load their bundles as the main thread does.
NODE_MODULE_INIT(/* exports, module, context */) {
  PinThisAddon();
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context, v8::String::NewFromUtf8Literal(isolate, "checksum"), v8::FunctionTemplate::New(isolate, Checksum)->GetFunction(context).ToLocalChecked()).Check();
}
