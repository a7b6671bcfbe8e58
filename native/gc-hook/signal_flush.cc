// tracepipe's signal flush: when SIGINT, SIGTERM or SIGHUP is about to end the process by its default
// action, the sessions' drains write their last events and end their streams first.
//
// A JavaScript listener cannot do this without changing what the application does: while one is
// installed the signal no longer kills (a program that ends naturally with a signal pending exits 0;
// one blocked in JavaScript dies only when it yields), and libraries such as signal-exit re-raise a
// signal only when their own listeners are the only ones. A sigaction handler is invisible to
// JavaScript, runs at once whatever the thread is doing, and then hands the signal back to whatever
// was there before it (Node's own handler or the default action), so the process dies of it as it
// would have. When the application listens itself, libuv's handler replaces this one and the
// application decides; src/ipc/exit-flush.ts puts this one back when its last listener goes.
//
// The handler uses only async-signal-safe calls: lock-free atomics on the sessions' shared memory,
// clock_gettime, nanosleep, unlink, sigaction and raise. The drains notice the stop by polling
// (JavaScript's Atomics.notify cannot be called from a signal handler).

#include <node.h>
#include <v8.h>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

constexpr int kMaxSessions = 64;
constexpr int kMaxPaths = 8;
constexpr int64_t kFlushNs = 3'000'000'000;
constexpr long kPollNs = 1'000'000;

// The session memory's control words and states (src/buffers/session-memory.ts), set by configure().
struct Layout {
  int state = -1;
  int exiting = -1;
  int wake = -1;
  int32_t enabled = 0;
  int32_t stopping = 0;
};
Layout layout;

// Sessions to flush: their control words, published for the handler; the backing stores that keep
// them mapped are owned on the JavaScript thread. Never destroyed: a signal may arrive after V8 is
// gone at exit, and the memory must still be there (a static array's destructors would also run
// after V8's teardown, and crash).
std::atomic<std::atomic<int32_t>*> sessions[kMaxSessions];
auto* const stores = new std::shared_ptr<v8::BackingStore>[kMaxSessions];
// Files to remove as the process dies of a signal (the diagnostics endpoint).
std::atomic<char*> paths[kMaxPaths];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];
struct sigaction previous[kSignalCount];
std::atomic<bool> flushing{false};

int IndexOf(int signo) {
  for (int i = 0; i < kSignalCount; i++) {
    if (kSignals[i] == signo) return i;
  }
  return -1;
}

int64_t NowNs() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// What the exit flush does from JavaScript (TraceSession.flushOnExit), for every session at once:
// mark the stop as the process's exit, stop, and wait (bounded) until each drain has ended its stream.
void FlushSessions() {
  bool waiting[kMaxSessions] = {};
  for (int i = 0; i < kMaxSessions; i++) {
    std::atomic<int32_t>* words = sessions[i].load(std::memory_order_acquire);
    if (words == nullptr) continue;
    words[layout.exiting].store(1);
    int32_t expected = layout.enabled;
    words[layout.state].compare_exchange_strong(expected, layout.stopping);
    words[layout.wake].fetch_add(1);
    waiting[i] = words[layout.state].load() == layout.stopping;
  }
  const int64_t deadline = NowNs() + kFlushNs;
  for (;;) {
    bool any = false;
    for (int i = 0; i < kMaxSessions; i++) {
      if (!waiting[i]) continue;
      std::atomic<int32_t>* words = sessions[i].load(std::memory_order_acquire);
      waiting[i] = words != nullptr && words[layout.state].load() == layout.stopping;
      any = any || waiting[i];
    }
    if (!any || NowNs() >= deadline) return;
    struct timespec pause = {0, kPollNs};
    nanosleep(&pause, nullptr);
  }
}

void OnTerminate(int signo) {
  const int savedErrno = errno;
  // A second signal while the first one flushes does not flush again (it is blocked meanwhile: see Install).
  if (!flushing.exchange(true)) {
    FlushSessions();
    for (auto& p : paths) {
      const char* path = p.load(std::memory_order_acquire);
      if (path != nullptr) unlink(path);
    }
  }
  // Back to what was there before, and the same signal again: pending while this handler runs, it is
  // delivered as the handler returns and does what it would have done had this handler never been.
  const int i = IndexOf(signo);
  if (i >= 0) sigaction(signo, &previous[i], nullptr);
  raise(signo);
  errno = savedErrno;
}

bool IsOurs(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == OnTerminate;
}

void Throw(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

int32_t IntArg(const v8::FunctionCallbackInfo<v8::Value>& info, int i) {
  return info[i]->Int32Value(info.GetIsolate()->GetCurrentContext()).FromMaybe(-1);
}

// configure(state, exiting, wake, enabled, stopping): the control words' indexes and the two states.
void Configure(const v8::FunctionCallbackInfo<v8::Value>& info) {
  if (info.Length() < 5) return Throw(info.GetIsolate(), "configure needs five numbers");
  layout = Layout{IntArg(info, 0), IntArg(info, 1), IntArg(info, 2), IntArg(info, 3), IntArg(info, 4)};
}

// track(sab): flushes this session's memory when a signal kills the process; returns its slot, -1 when full.
void Track(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsSharedArrayBuffer()) return Throw(isolate, "track needs a SharedArrayBuffer");
  if (layout.state < 0) return Throw(isolate, "configure first");
  std::shared_ptr<v8::BackingStore> store = info[0].As<v8::SharedArrayBuffer>()->GetBackingStore();
  const int top = std::max({layout.state, layout.exiting, layout.wake});
  if (store->ByteLength() < static_cast<size_t>(top + 1) * sizeof(int32_t)) return Throw(isolate, "session memory too small");
  for (int i = 0; i < kMaxSessions; i++) {
    if (stores[i]) continue;
    stores[i] = store;
    sessions[i].store(static_cast<std::atomic<int32_t>*>(store->Data()), std::memory_order_release);
    info.GetReturnValue().Set(i);
    return;
  }
  info.GetReturnValue().Set(-1);
}

// untrack(slot)
void Untrack(const v8::FunctionCallbackInfo<v8::Value>& info) {
  const int i = IntArg(info, 0);
  if (i < 0 || i >= kMaxSessions) return;
  sessions[i].store(nullptr, std::memory_order_release);
  stores[i].reset();
}

// install(signo): puts the handler in place of the current action; false when that action ignores the
// signal (the process would not die of it) or the signal is not one this handles.
void Install(const v8::FunctionCallbackInfo<v8::Value>& info) {
  const int signo = IntArg(info, 0);
  const int i = IndexOf(signo);
  struct sigaction current;
  if (i < 0 || sigaction(signo, nullptr, &current) != 0) return info.GetReturnValue().Set(false);
  if (IsOurs(current)) return info.GetReturnValue().Set(true);
  if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN) return info.GetReturnValue().Set(false);
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = OnTerminate;
  // The other termination signals wait while one flushes: the process dies of the first, as untraced.
  sigemptyset(&action.sa_mask);
  for (int s : kSignals) sigaddset(&action.sa_mask, s);
  action.sa_flags = SA_RESTART;
  previous[i] = current;
  info.GetReturnValue().Set(sigaction(signo, &action, nullptr) == 0);
}

// uninstall(signo): gives the signal back to what was there before, unless someone replaced the handler since.
void Uninstall(const v8::FunctionCallbackInfo<v8::Value>& info) {
  const int signo = IntArg(info, 0);
  const int i = IndexOf(signo);
  struct sigaction current;
  if (i < 0 || sigaction(signo, nullptr, &current) != 0 || !IsOurs(current)) return;
  sigaction(signo, &previous[i], nullptr);
}

// unlinkOnSignal(path): removes `path` as a signal kills the process; returns its slot, -1 when full.
void UnlinkOnSignal(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsString()) return Throw(isolate, "unlinkOnSignal needs a path");
  v8::String::Utf8Value path(isolate, info[0]);
  for (int i = 0; i < kMaxPaths; i++) {
    if (paths[i].load() != nullptr) continue;
    paths[i].store(strdup(*path), std::memory_order_release);
    info.GetReturnValue().Set(i);
    return;
  }
  info.GetReturnValue().Set(-1);
}

// keepOnSignal(slot): forgets a path given to unlinkOnSignal.
void KeepOnSignal(const v8::FunctionCallbackInfo<v8::Value>& info) {
  const int i = IntArg(info, 0);
  if (i < 0 || i >= kMaxPaths) return;
  free(paths[i].exchange(nullptr));
}

void Export(v8::Local<v8::Context> context, v8::Local<v8::Object> exports, const char* name, v8::FunctionCallback fn) {
  v8::Isolate* isolate = context->GetIsolate();
  exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(), v8::FunctionTemplate::New(isolate, fn)->GetFunction(context).ToLocalChecked()).Check();
}

}  // namespace

// The handler and its tables are the process's: only the main thread calls these (exit-flush.ts).
NODE_MODULE_INIT(/* exports, module, context */) {
  Export(context, exports, "configure", Configure);
  Export(context, exports, "track", Track);
  Export(context, exports, "untrack", Untrack);
  Export(context, exports, "install", Install);
  Export(context, exports, "uninstall", Uninstall);
  Export(context, exports, "unlinkOnSignal", UnlinkOnSignal);
  Export(context, exports, "keepOnSignal", KeepOnSignal);
}
