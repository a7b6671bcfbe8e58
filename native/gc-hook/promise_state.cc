// A native promise's outcome, read from V8's own state. The JavaScript ways to learn how a promise
// settled (then, await, Promise.race...) all attach a reaction, which marks its rejection as handled:
// a span that watched the promise that way would keep an application's unhandled rejection from
// being reported (and from ending the process). Reading the state attaches nothing.

#include <node.h>
#include <v8.h>

namespace {

// rejection(promise, otherwise): the reason `promise` was rejected with; `otherwise` when it is
// fulfilled or still pending.
void Rejection(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 2 || !info[0]->IsPromise()) {
    isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8Literal(isolate, "rejection needs a promise and a value")));
    return;
  }
  v8::Local<v8::Promise> promise = info[0].As<v8::Promise>();
  info.GetReturnValue().Set(promise->State() == v8::Promise::kRejected ? promise->Result() : info[1]);
}

// settled(promise): true once `promise` is fulfilled or rejected.
void Settled(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsPromise()) {
    isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8Literal(isolate, "settled needs a promise")));
    return;
  }
  info.GetReturnValue().Set(info[0].As<v8::Promise>()->State() != v8::Promise::kPending);
}

}  // namespace

// Context-aware: worker threads load it too (each thread watches its own spans' promises).
NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = context->GetIsolate();
  auto method = [&](const char* name, v8::FunctionCallback fn) {
    exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(), v8::FunctionTemplate::New(isolate, fn)->GetFunction(context).ToLocalChecked()).Check();
  };
  method("rejection", Rejection);
  method("settled", Settled);
}
