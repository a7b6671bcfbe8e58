// A native promise's outcome, read from V8's own state. The JavaScript ways to learn how a promise
// settled (then, await, Promise.race...) all attach a reaction, which marks its rejection as handled:
// a span that watched the promise that way would keep an application's unhandled rejection from
// being reported (and from ending the process). Reading the state attaches nothing.

#include <node.h>
#include <v8.h>
#include "pin_addon.h"

namespace {

// outcome(promise, pending, fulfilled): `pending` while the promise is pending, `fulfilled` once it is
// fulfilled, and the reason once it is rejected. One call answers both questions a span asks.
void Outcome(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 3 || !info[0]->IsPromise()) {
    isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8Literal(isolate, "outcome needs a promise and two values")));
    return;
  }
  v8::Local<v8::Promise> promise = info[0].As<v8::Promise>();
  switch (promise->State()) {
    case v8::Promise::kPending:
      info.GetReturnValue().Set(info[1]);
      break;
    case v8::Promise::kFulfilled:
      info.GetReturnValue().Set(info[2]);
      break;
    case v8::Promise::kRejected:
      info.GetReturnValue().Set(promise->Result());
      break;
  }
}

}  // namespace

// Context-aware: worker threads load it too (each thread watches its own spans' promises).
NODE_MODULE_INIT(/* exports, module, context */) {
  PinThisAddon();
  v8::Isolate* isolate = context->GetIsolate();
  auto method = [&](const char* name, v8::FunctionCallback fn) {
    exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(), v8::FunctionTemplate::New(isolate, fn)->GetFunction(context).ToLocalChecked()).Check();
  };
  method("outcome", Outcome);
}
