// tracepipe's signal flush: when SIGINT, SIGTERM or SIGHUP is about to end the process by its default
// action, the sessions' streams end complete first, and then the process dies of the signal.
//
// A JavaScript listener cannot do this without changing what the application does: while one is
// installed the signal no longer kills (a program that ends naturally with a signal pending exits 0;
// one blocked in JavaScript dies only when it yields), and libraries such as signal-exit re-raise a
// signal only when their own listeners are the only ones. A sigaction handler is invisible to
// JavaScript. It asks the main thread's loop to flush (a uv_async: the providers then write their
// last events, as at 'exit'), and a thread of this addon waits for it: if the loop has not taken the
// signal within kGraceNs (blocked, or ending), that thread ends the streams itself from shared memory.
// Either way the signal then goes back to whatever was there before (Node's own handler or the
// default action) and is raised again, so the process dies of it, with its status. When the
// application listens itself, libuv's handler replaces this one and the application decides;
// src/ipc/exit-flush.ts puts this one back when its last listener goes.
//
// The handler uses only async-signal-safe calls: lock-free atomics, uv_async_send and sem_post. The
// drains notice a stop set from here by polling (Atomics.notify cannot be called outside V8).

#include <node.h>
#include <uv.h>
#include <v8.h>

#include <semaphore.h>
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
#include <thread>
#include "pin_addon.h"

namespace {

constexpr int kMaxSessions = 64;
constexpr int kMaxPaths = 8;
constexpr int64_t kFlushNs = 3'000'000'000;
constexpr long kPollNs = 1'000'000;
// How long the main thread's loop has to take a signal before this addon's thread ends the streams
// without it: a loop that has not turned in this long is stalled by the default StallMs.
constexpr long kGraceNs = 100'000'000;

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

// Who is dealing with the signal: nobody, nobody yet (signalled), JavaScript, or the waiting thread.
enum Phase : int { kIdle = 0, kSignalled = 1, kJavaScript = 2, kNative = 3 };
std::atomic<int> phase{kIdle};
std::atomic<int> pendingSignal{0};
// The main thread's doorbell and what it calls; the waiting thread sleeps on `wake`.
std::atomic<uv_async_t*> doorbell{nullptr};
v8::Global<v8::Context> doorbellContext;
v8::Global<v8::Function> doorbellCallback;
sem_t wake;
bool started = false;

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

void RemovePaths() {
  for (auto& p : paths) {
    const char* path = p.load(std::memory_order_acquire);
    if (path != nullptr) unlink(path);
  }
}

// Back to what was there before, and the same signal again: it does what it would have done had this
// handler never been there. Raised on this thread, it is delivered as soon as it is unblocked.
void Die(int signo) {
  RemovePaths();
  const int i = IndexOf(signo);
  if (i >= 0) sigaction(signo, &previous[i], nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(signo);
  // Still here: the previous action does not kill (a handler of someone else's). The next signal decides anew.
  phase.store(kIdle);
}

// Waits, bounded, for the thread that took the signal to kill the process: the application must not run
// on while its streams end (it would not have, untraced).
void AwaitDeath() {
  const int64_t deadline = NowNs() + kFlushNs + kGraceNs;
  while (phase.load() == kNative && NowNs() < deadline) {
    struct timespec pause = {0, kPollNs};
    nanosleep(&pause, nullptr);
  }
}

// Takes the signal on this thread, now (the phase says kNative): the streams end from shared memory,
// then the process dies of it.
void TakeNatively(int signo) {
  FlushSessions();
  Die(signo);
}

// Set once the main thread's loop will not turn again (its 'exit'): a signal then cannot wait for it.
std::atomic<bool> loopEnded{false};

void OnTerminate(int signo, siginfo_t* info, void*) {
  const int savedErrno = errno;
  // The first signal decides, as untraced; later ones find the process already dying of it.
  int idle = kIdle;
  if (phase.compare_exchange_strong(idle, kSignalled)) {
    pendingSignal.store(signo);
    const bool self = info != nullptr && info->si_pid == getpid() && (info->si_code == SI_USER || info->si_code == SI_TKILL);
    // The process signalled itself (process.kill(process.pid), signal-exit's re-raise): untraced, the
    // code after that call never runs, so nothing may run here either. Nor can the loop take a signal
    // once it has ended.
    if (self || loopEnded.load()) {
      phase.store(kNative);
      TakeNatively(signo);
    } else {
      uv_async_t* async = doorbell.load();
      if (async != nullptr) uv_async_send(async);
      sem_post(&wake);
    }
  }
  errno = savedErrno;
}

// What the main thread does as it leaves the loop for good (its 'exit', then the environment's
// teardown, then exit()): a signal that arrived and that nobody took yet is taken here; one the
// waiting thread took is waited for.
void TakePendingAtExit() {
  loopEnded.store(true);
  int signalled = kSignalled;
  if (phase.compare_exchange_strong(signalled, kNative)) {
    TakeNatively(pendingSignal.load());
  } else if (phase.load() == kNative) {
    AwaitDeath();
  }
}

// This addon's thread: once signalled, gives the main thread's loop kGraceNs to take the signal, then
// takes it: ends the streams from shared memory and dies of the signal.
void WaitForSignal() {
  for (;;) {
    while (sem_wait(&wake) != 0) {
    }
    struct timespec grace = {0, kGraceNs};
    while (nanosleep(&grace, &grace) != 0 && errno == EINTR) {
    }
    int signalled = kSignalled;
    if (phase.compare_exchange_strong(signalled, kNative)) TakeNatively(pendingSignal.load());
  }
}

// The doorbell rang on the main thread: JavaScript flushes, then calls die().
void Ring(uv_async_t*) {
  // The waiting thread took the signal: this thread stops here until the process dies of it.
  if (phase.load() == kNative) return AwaitDeath();
  if (doorbellCallback.IsEmpty() || phase.load() != kSignalled) return;
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  v8::HandleScope scope(isolate);
  v8::Local<v8::Context> context = doorbellContext.Get(isolate);
  v8::Context::Scope contextScope(context);
  node::MakeCallback(isolate, context->Global(), doorbellCallback.Get(isolate), 0, nullptr, node::async_context{0, 0});
}

void CloseDoorbell(void*) {
  TakePendingAtExit();
  uv_async_t* async = doorbell.exchange(nullptr);
  doorbellCallback.Reset();
  doorbellContext.Reset();
  if (async != nullptr) uv_close(reinterpret_cast<uv_handle_t*>(async), [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
}

bool IsOurs(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction == OnTerminate;
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
  action.sa_sigaction = OnTerminate;
  // The other termination signals wait while one flushes: the process dies of the first, as untraced.
  sigemptyset(&action.sa_mask);
  for (int s : kSignals) sigaddset(&action.sa_mask, s);
  action.sa_flags = SA_RESTART | SA_SIGINFO;
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

// start(onSignal): the main thread's doorbell (unref'd) and the waiting thread, once. `onSignal` runs on
// the main thread when a signal arrives while its loop turns: it calls claim(), flushes, then die().
void Start(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (info.Length() < 1 || !info[0]->IsFunction()) return Throw(isolate, "start needs a function");
  if (started) return;
  uv_loop_t* loop = node::GetCurrentEventLoop(isolate);
  if (loop == nullptr) return Throw(isolate, "this thread has no event loop");
  if (sem_init(&wake, 0, 0) != 0) return Throw(isolate, "cannot create the signal flush's semaphore");
  auto* async = new uv_async_t();
  if (uv_async_init(loop, async, Ring) != 0) {
    delete async;
    return Throw(isolate, "cannot open the signal flush's doorbell");
  }
  uv_unref(reinterpret_cast<uv_handle_t*>(async));
  doorbellContext.Reset(isolate, isolate->GetCurrentContext());
  doorbellCallback.Reset(isolate, info[0].As<v8::Function>());
  doorbell.store(async);
  node::AddEnvironmentCleanupHook(isolate, CloseDoorbell, nullptr);
  // After the environment: a signal between its teardown and the process's end.
  atexit(TakePendingAtExit);
  // Signals stay unblocked here: if the process dies of one on this thread, it dies of it all the same.
  std::thread(WaitForSignal).detach();
  started = true;
}

// claim(): the signal that arrived, if JavaScript is the first to take it (0 otherwise): the caller
// flushes and then calls die(signal).
void Claim(const v8::FunctionCallbackInfo<v8::Value>& info) {
  int signalled = kSignalled;
  info.GetReturnValue().Set(phase.compare_exchange_strong(signalled, kJavaScript) ? pendingSignal.load() : 0);
}

// die(signal): after claim() and the flush, the process dies of the signal as it would have untraced.
void DieNow(const v8::FunctionCallbackInfo<v8::Value>& info) {
  Die(IntArg(info, 0));
}

// exiting(): the main thread's loop has ended (its 'exit' listeners run): takes a signal that arrived
// and nobody took, waits for the one the waiting thread took, and has later ones taken at once.
void Exiting(const v8::FunctionCallbackInfo<v8::Value>&) {
  TakePendingAtExit();
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
  PinThisAddon();
  Export(context, exports, "configure", Configure);
  Export(context, exports, "start", Start);
  Export(context, exports, "claim", Claim);
  Export(context, exports, "die", DieNow);
  Export(context, exports, "exiting", Exiting);
  Export(context, exports, "track", Track);
  Export(context, exports, "untrack", Untrack);
  Export(context, exports, "install", Install);
  Export(context, exports, "uninstall", Uninstall);
  Export(context, exports, "unlinkOnSignal", UnlinkOnSignal);
  Export(context, exports, "keepOnSignal", KeepOnSignal);
}
