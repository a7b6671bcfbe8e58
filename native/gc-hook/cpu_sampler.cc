// Runtime.CpuSampler's native route: V8's CpuProfiler on each thread that asks for it, with its samples
// handed to JavaScript (on that thread, or on the main thread's watchdog while the main thread's loop
// is blocked) as (time, stack id) pairs over interned frames and stacks.
//
// V8 hands out samples only when a profile stops. So profiles follow each other: every kRotateMs the
// next profile starts, then the current one stops and its samples newer than those already taken are
// queued. A profile that is not the last one running stops at once, and the samples V8's processor
// thread has not handled yet go to the profiles still running when it does, so the next one gets
// them: starting it first leaves no gap (and the last profile's stop lets the processor finish).
// A sample handled while both run reaches both with the same timestamp: the times tell duplicates.
//
// Stopping a profile must happen on the profiled thread. A process-wide rotation thread asks for it
// with Isolate::RequestInterrupt, which runs while JavaScript runs, even JavaScript that never yields;
// a thread resting in its event loop runs no JavaScript, so the thread's own timer (src/providers/
// cpu-sampler/native-route.ts) rotates too. Whichever comes first does it; the other finds it done.
//
// Frame and stack ids are process-wide and stable (the tables only grow), so any thread may write any
// thread's samples with the same ids; JavaScript mirrors the tables from where it last read.

#include <node.h>
#include <uv.h>
#include <v8-profiler.h>
#include <v8.h>

#include "flat_map.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#include "pin_addon.h"

namespace {

// Each rotation costs the thread V8's stop and start of a profile and the interning of its new
// stacks (on a deep-stacked program, about 1 ms at 100 ms rotations, most of the sampler's own cost).
// The main thread rotates once a second: whatever ends it (a stop, an exit, a crash dump) first takes
// its samples on the thread itself. A worker's last samples can only be taken by another thread once
// it has rotated, and a worker terminated or ended with the process gets no last rotation in time:
// workers rotate every 100 ms, so that is all they can lose.
constexpr int kRotateMs = 1000;
constexpr int kWorkerRotateMs = 100;
// How often the rotation thread looks for samplers due.
constexpr int kRotationCheckMs = 100;
// Samples a thread may queue before something takes them: over two minutes at 1 ms.
constexpr size_t kMaxQueued = 1 << 17;
// Distinct stacks the process-wide table holds (each 8 bytes, plus its index entry).
constexpr size_t kMaxStacks = 1 << 21;
// No new sample for this long while the thread used this much CPU (and this many intervals' worth):
// V8's profiler has stopped sampling, and is replaced. Empty rotations alone can be V8's sampler and
// processor threads starved of CPU on a loaded machine, where a replacement would not help.
constexpr double kStuckMs = 1500;
constexpr double kStuckCpuMs = 100;
constexpr double kStuckIntervals = 100;

struct Frame {
  std::string name;
  std::string url;
  uint32_t line;
  uint32_t column;
};

struct IdHash {
  size_t operator()(uint64_t key) const { return static_cast<size_t>(tracepipe::MixBits(key)); }
};

// Process-wide, never destroyed: the rotation thread and other threads' environments may outlive
// static destruction at exit.
struct Tables {
  std::mutex mu;
  std::vector<Frame> frames;  // id = index + 1
  std::unordered_map<std::string, uint32_t> frameIds;
  std::vector<uint32_t> stacks;  // frame id, parent stack id; stack id = index / 2 + 1
  // (frame id << 32 | parent stack id) -> stack id
  tracepipe::FlatMap<uint64_t, uint32_t, IdHash> stackIds;
  // kMaxStacks, lowered by tests (limitStacks).
  size_t maxStacks = kMaxStacks;
};
Tables& tables = *new Tables();

// A frame as the profiler names it: V8 keeps one copy of each name and URL for a profiler's life, so
// their addresses tell frames apart without reading the strings (a sampler's cache, emptied with its profiler).
struct FrameKey {
  const char* name;
  const char* url;
  int line;
  int column;
  bool operator==(const FrameKey& o) const { return name == o.name && url == o.url && line == o.line && column == o.column; }
};
struct FrameKeyHash {
  size_t operator()(const FrameKey& k) const {
    const uint64_t lines = (static_cast<uint64_t>(static_cast<uint32_t>(k.line)) << 32) | static_cast<uint32_t>(k.column);
    return static_cast<size_t>(tracepipe::MixBits(reinterpret_cast<uintptr_t>(k.name) ^ tracepipe::MixBits(reinterpret_cast<uintptr_t>(k.url) ^ tracepipe::MixBits(lines))));
  }
};
using FrameCache = tracepipe::FlatMap<FrameKey, uint32_t, FrameKeyHash>;
// A profile's nodes already resolved to stack ids, for one Collect.
using NodeMemo = tracepipe::FlatMap<uint64_t, uint32_t, IdHash>;

struct ThreadSampler {
  v8::Isolate* isolate = nullptr;
  uint32_t threadId = 0;
  v8::CpuProfiler* profiler = nullptr;
  // The profiler made ahead by prepare(), logging code as it is created; kept when sampling stops.
  v8::CpuProfiler* prepared = nullptr;
  // The profiler's frames already interned (its names' addresses are its own).
  FrameCache frameCache;
  // Kept between rotations for its capacity.
  NodeMemo memo;
  int intervalUs = 1000;
  int rotateMs = kRotateMs;
  // The profile running, stopped at the next rotation once the next one has started.
  v8::ProfilerId current = 0;
  bool hasCurrent = false;
  int64_t lastTakenUs = std::numeric_limits<int64_t>::min();
  // Read by the rotation thread too.
  std::atomic<uint64_t> lastRotationNs{0};
  double lastCpuMs = 0;
  // Test hook: the next N rotations find their profile empty, as a stuck profiler's would be.
  int forgetRotations = 0;
  // Since the last rotation that found samples: the thread's CPU time and the time.
  double emptyCpuMs = 0;
  double emptyMs = 0;
  std::atomic<bool> sampling{false};
  std::atomic<bool> interruptPending{false};

  // What JavaScript takes, guarded by `mu` (taken from this thread or the watchdog's).
  std::mutex mu;
  std::vector<double> times;  // µs of CLOCK_MONOTONIC
  std::vector<uint32_t> stackIds;
  // When the oldest sample still queued was queued (uv_hrtime).
  uint64_t queuedSinceNs = 0;
  uint64_t lostQueueFull = 0;
  uint64_t lostTableFull = 0;
  uint64_t lostRestart = 0;
  std::vector<std::string> restarts;
};

struct Registry {
  std::mutex mu;
  std::condition_variable wake;
  // Every sampler that has samples or may get more, for take(): a thread that ended stays until taken.
  std::map<uint32_t, ThreadSampler*> byThread;
  // The samplers the rotation thread rotates.
  std::map<uint32_t, ThreadSampler*> rotating;
  bool rotatorStarted = false;
};
Registry& registry = *new Registry();

void Throw(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

uint32_t InternFrameLocked(const char* name, const char* url, int line, int column);

// The frame id of `node`, or UINT32_MAX for a new frame once the stack table is full: no stack could
// use it, and the table would otherwise grow with every new function sampled (code made at run time).
uint32_t FrameIdLocked(const v8::CpuProfileNode* node, FrameCache& cache) {
  const char* name = node->GetFunctionNameStr();
  const char* url = node->GetScriptResourceNameStr();
  const int line = node->GetLineNumber();
  const int column = node->GetColumnNumber();
  const FrameKey seen{name, url, line, column};
  if (const uint32_t* cached = cache.Find(seen)) return *cached;
  const uint32_t id = InternFrameLocked(name, url, line, column);
  if (id != UINT32_MAX) cache.Put(seen, id);
  return id;
}

uint32_t InternFrameLocked(const char* name, const char* url, int line, int column) {
  Frame frame{name ? name : "", url ? url : "", static_cast<uint32_t>(line > 0 ? line : 0), static_cast<uint32_t>(column > 0 ? column : 0)};
  std::string key = frame.name;
  key.push_back('\0');
  key += frame.url;
  key.push_back('\0');
  key += std::to_string(frame.line);
  key.push_back(':');
  key += std::to_string(frame.column);
  auto it = tables.frameIds.find(key);
  if (it != tables.frameIds.end()) return it->second;
  if (tables.stacks.size() / 2 >= tables.maxStacks) return UINT32_MAX;
  tables.frames.push_back(std::move(frame));
  const uint32_t id = static_cast<uint32_t>(tables.frames.size());
  tables.frameIds.emplace(std::move(key), id);
  return id;
}

// The stack id of `node` (0 for V8's root, which is no frame of the program), or UINT32_MAX when the
// table is full. `memo` holds this profile's nodes already resolved.
uint32_t StackIdLocked(const v8::CpuProfileNode* node, NodeMemo& memo, FrameCache& cache, std::vector<const v8::CpuProfileNode*>& chain) {
  chain.clear();
  uint32_t parent = 0;
  for (const v8::CpuProfileNode* n = node; n != nullptr && n->GetParent() != nullptr; n = n->GetParent()) {
    if (const uint32_t* known = memo.Find(reinterpret_cast<uintptr_t>(n))) {
      parent = *known;
      break;
    }
    chain.push_back(n);
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const uint64_t nodeKey = reinterpret_cast<uintptr_t>(*it);
    if (parent == UINT32_MAX) {
      memo.Put(nodeKey, UINT32_MAX);
      continue;
    }
    const uint32_t frame = FrameIdLocked(*it, cache);
    const uint64_t key = (static_cast<uint64_t>(frame) << 32) | parent;
    const uint32_t* found = frame == UINT32_MAX ? nullptr : tables.stackIds.Find(key);
    uint32_t id;
    if (found != nullptr) {
      id = *found;
    } else if (frame == UINT32_MAX || tables.stacks.size() / 2 >= tables.maxStacks) {
      id = UINT32_MAX;
    } else {
      tables.stacks.push_back(frame);
      tables.stacks.push_back(parent);
      id = static_cast<uint32_t>(tables.stacks.size() / 2);
      tables.stackIds.Put(key, id);
    }
    memo.Put(nodeKey, id);
    parent = id;
  }
  return parent;
}

// Queues the samples of a stopped profile newer than those taken so far; returns how many.
size_t Collect(ThreadSampler* s, v8::CpuProfile* profile) {
  const int count = profile->GetSamplesCount();
  if (s->forgetRotations > 0) {
    s->forgetRotations--;
    return 0;
  }
  std::vector<double> times;
  std::vector<uint32_t> ids;
  uint64_t tableFull = 0;
  {
    std::lock_guard<std::mutex> lock(tables.mu);
    s->memo.Clear();
    std::vector<const v8::CpuProfileNode*> chain;
    for (int i = 0; i < count; i++) {
      const int64_t at = profile->GetSampleTimestamp(i);
      if (at <= s->lastTakenUs) continue;
      s->lastTakenUs = at;
      const uint32_t id = StackIdLocked(profile->GetSample(i), s->memo, s->frameCache, chain);
      if (id == UINT32_MAX) {
        tableFull++;
        continue;
      }
      times.push_back(static_cast<double>(at));
      ids.push_back(id);
    }
  }
  std::lock_guard<std::mutex> lock(s->mu);
  if (!times.empty() && s->times.empty()) s->queuedSinceNs = uv_hrtime();
  s->lostTableFull += tableFull;
  const size_t room = kMaxQueued > s->times.size() ? kMaxQueued - s->times.size() : 0;
  const size_t kept = times.size() < room ? times.size() : room;
  s->lostQueueFull += times.size() - kept;
  s->times.insert(s->times.end(), times.begin(), times.begin() + kept);
  s->stackIds.insert(s->stackIds.end(), ids.begin(), ids.begin() + kept);
  return times.size() + tableFull;
}

bool StartProfile(ThreadSampler* s, v8::ProfilerId* id) {
  v8::CpuProfilingResult r = s->profiler->Start(v8::CpuProfilingOptions(v8::kLeafNodeLineNumbers, v8::CpuProfilingOptions::kNoSampleLimit, s->intervalUs));
  *id = r.id;
  return r.status == v8::CpuProfilingStatus::kStarted;
}

void StopAndCollect(ThreadSampler* s, v8::ProfilerId id, size_t* collected) {
  v8::CpuProfile* profile = s->profiler->Stop(id);
  if (profile == nullptr) return;
  *collected += Collect(s, profile);
  profile->Delete();
}

void NewProfiler(ThreadSampler* s) {
  // A function inlined into an optimized caller is a frame of its own only with detailed source
  // positions (what the inspector turns on too); code optimized before this keeps to its caller.
  v8::CpuProfiler::UseDetailedSourcePositionsForProfiling(s->isolate);
  // A prepared profiler has logged code all along: it starts warm, and knows what was inlined.
  s->profiler = s->prepared != nullptr ? s->prepared : v8::CpuProfiler::New(s->isolate, v8::kDebugNaming, v8::kLazyLogging);
  s->profiler->SetSamplingInterval(s->intervalUs);
  // On Windows V8's sampler thread busy-waits for exact intervals unless told otherwise; it sleeps
  // instead. Elsewhere V8 reads no such flag: its thread always waits on a timed condition variable.
  s->profiler->SetUsePreciseSampling(false);
  s->hasCurrent = StartProfile(s, &s->current);
}

// Stops both profiles (queuing their last samples), then disposes of the profiler, but for a
// prepared one that is to stay (`keepPrepared`: sampling may start again).
void DisposeProfiler(ThreadSampler* s, bool keepPrepared) {
  if (s->profiler == nullptr) return;
  size_t collected = 0;
  if (s->hasCurrent) StopAndCollect(s, s->current, &collected);
  s->hasCurrent = false;
  if (s->profiler == s->prepared) {
    if (keepPrepared) {
      s->profiler = nullptr;
      return;
    }
    s->prepared = nullptr;
  }
  s->profiler->Dispose();
  s->profiler = nullptr;
  s->frameCache.Release();
  s->memo.Release();
}

// Whether a rotation is due: the rotation thread's interrupt and the thread's own timer both ask, and
// the first does it (a tenth of the period's slack, so neither waits a whole period for the other).
bool Due(const ThreadSampler* s, uint64_t now) {
  return now - s->lastRotationNs.load() >= static_cast<uint64_t>(s->rotateMs) * 1000000 * 9 / 10;
}

// On the sampled thread: start the next profile, then stop the current one.
void Rotate(ThreadSampler* s, bool force) {
  if (!s->sampling.load() || s->profiler == nullptr) return;
  const uint64_t now = uv_hrtime();
  if (!force && !Due(s, now)) return;
  v8::HandleScope scope(s->isolate);
  v8::ProfilerId next = 0;
  const bool started = StartProfile(s, &next);
  size_t collected = 0;
  const bool hadCurrent = s->hasCurrent;
  if (hadCurrent) StopAndCollect(s, s->current, &collected);
  s->current = next;
  s->hasCurrent = started;
  const double cpuMs = ThreadCpuMs();
  const double usedMs = cpuMs - s->lastCpuMs;
  const double elapsedMs = static_cast<double>(now - s->lastRotationNs.load()) / 1e6;
  const bool empty = collected == 0 && hadCurrent;
  s->emptyCpuMs = empty ? s->emptyCpuMs + usedMs : 0;
  s->emptyMs = empty ? s->emptyMs + elapsedMs : 0;
  s->lastCpuMs = cpuMs;
  s->lastRotationNs = now;
  if (s->emptyMs >= kStuckMs && s->emptyCpuMs >= kStuckCpuMs && s->emptyCpuMs * 1000 >= kStuckIntervals * s->intervalUs) {
    char reason[160];
    snprintf(reason, sizeof reason, "no sample in %.0f ms while the thread used %.0f ms of CPU", s->emptyMs, s->emptyCpuMs);
    const double lostCpuMs = s->emptyCpuMs;
    s->emptyCpuMs = s->emptyMs = 0;
    s->forgetRotations = 0;
    DisposeProfiler(s, false);
    NewProfiler(s);
    std::lock_guard<std::mutex> lock(s->mu);
    s->restarts.emplace_back(reason);
    // An estimate: a sample per interval of the CPU time the thread used while none came.
    s->lostRestart += static_cast<uint64_t>(lostCpuMs * 1000 / s->intervalUs);
  }
}

void OnInterrupt(v8::Isolate*, void* data) {
  ThreadSampler* s = static_cast<ThreadSampler*>(data);
  s->interruptPending.store(false);
  Rotate(s, false);
}

void RotationThread() {
  std::unique_lock<std::mutex> lock(registry.mu);
  for (;;) {
    registry.wake.wait_for(lock, std::chrono::milliseconds(kRotationCheckMs));
    const uint64_t now = uv_hrtime();
    for (auto& [id, s] : registry.rotating) {
      if (Due(s, now) && !s->interruptPending.exchange(true)) s->isolate->RequestInterrupt(OnInterrupt, s);
    }
  }
}

// The sampler of this isolate, created on first use and kept for the process's life: an interrupt
// asked for it may still be pending when its thread stops sampling.
struct IsolateData {
  ThreadSampler* sampler = nullptr;
};

ThreadSampler* SamplerOf(IsolateData* data, v8::Isolate* isolate) {
  if (data->sampler == nullptr) {
    data->sampler = new ThreadSampler();
    data->sampler->isolate = isolate;
  }
  return data->sampler;
}

ThreadSampler* Sampler(const v8::FunctionCallbackInfo<v8::Value>& info) {
  return static_cast<IsolateData*>(info.Data().As<v8::External>()->Value())->sampler;
}

// The rotation thread must not ask this isolate for anything once it stops sampling or is gone.
void StopRotating(ThreadSampler* s) {
  std::lock_guard<std::mutex> lock(registry.mu);
  auto it = registry.rotating.find(s->threadId);
  if (it != registry.rotating.end() && it->second == s) registry.rotating.erase(it);
}

// start(threadId, intervalUs): samples this thread from now on (or with a new interval from the next rotation).
void Start(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  IsolateData* data = static_cast<IsolateData*>(info.Data().As<v8::External>()->Value());
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (info.Length() < 2 || !info[0]->IsUint32() || !info[1]->IsInt32()) return Throw(isolate, "start needs (threadId, intervalUs)");
  const int intervalUs = info[1]->Int32Value(context).FromJust();
  if (intervalUs < 1) return Throw(isolate, "intervalUs must be at least 1");
  ThreadSampler* s = SamplerOf(data, isolate);
  s->threadId = info[0]->Uint32Value(context).FromJust();
  s->rotateMs = s->threadId == 0 ? kRotateMs : kWorkerRotateMs;
  const bool retune = s->profiler != nullptr && intervalUs != s->intervalUs;
  s->intervalUs = intervalUs;
  if (s->profiler == nullptr) {
    v8::HandleScope scope(isolate);
    NewProfiler(s);
    s->lastRotationNs = uv_hrtime();
    s->lastCpuMs = ThreadCpuMs();
  } else if (retune && s->sampling.load()) {
    // V8 rounds each profile's interval up to a multiple of the profiler's base interval (the one
    // given at NewProfiler): without a new base, a finer interval asked for later never applies. V8
    // reads the base only as a profile starts or stops, so it is set now and the next profile,
    // started at once, samples at the new interval (the running one keeps its own until it stops).
    s->profiler->SetSamplingInterval(intervalUs);
    v8::HandleScope scope(isolate);
    Rotate(s, true);
  }
  s->sampling.store(true);
  std::lock_guard<std::mutex> lock(registry.mu);
  registry.byThread[s->threadId] = s;
  registry.rotating[s->threadId] = s;
  if (!registry.rotatorStarted) {
    registry.rotatorStarted = true;
    std::thread(RotationThread).detach();
  }
}

// stop(): this thread's sampling ends; its last samples are queued for take().
void Stop(const v8::FunctionCallbackInfo<v8::Value>& info) {
  ThreadSampler* s = Sampler(info);
  if (s == nullptr || s->profiler == nullptr) return;
  StopRotating(s);
  s->sampling.store(false);
  v8::HandleScope scope(info.GetIsolate());
  DisposeProfiler(s, true);
}

// rotate(): from the thread's own timer, when its loop turns; nothing when an interrupt just did it.
void RotateNow(const v8::FunctionCallbackInfo<v8::Value>& info) {
  ThreadSampler* s = Sampler(info);
  if (s != nullptr) Rotate(s, info.Length() > 0 && info[0]->IsTrue());
}

v8::Local<v8::String> Str(v8::Isolate* isolate, const std::string& s) {
  return v8::String::NewFromUtf8(isolate, s.data(), v8::NewStringType::kNormal, static_cast<int>(s.size())).ToLocalChecked();
}

// take(threadId, knownFrames, knownStacks): from any thread, what `threadId` queued, and the frames and
// stacks defined since the caller's mirror last grew:
// { times: Float64Array (µs, CLOCK_MONOTONIC), stacks: Uint32Array, frames: [name, url, line, column, ...]
//   from id knownFrames + 1, stackDefs: Uint32Array [frame, parent, ...] from id knownStacks + 1,
//   lostQueueFull, lostTableFull, lostRestart, restarts: string[] } or undefined when the thread never sampled.
void Take(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (info.Length() < 3 || !info[0]->IsUint32() || !info[1]->IsUint32() || !info[2]->IsUint32()) return Throw(isolate, "take needs (threadId, knownFrames, knownStacks)");
  const uint32_t threadId = info[0]->Uint32Value(context).FromJust();
  const uint32_t knownFrames = info[1]->Uint32Value(context).FromJust();
  const uint32_t knownStacks = info[2]->Uint32Value(context).FromJust();
  ThreadSampler* s = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry.mu);
    auto it = registry.byThread.find(threadId);
    if (it == registry.byThread.end()) return;
    s = it->second;
    // What a thread that stopped sampling left is taken once; the thread, if alive, starts it again.
    if (!s->sampling.load()) registry.byThread.erase(it);
  }
  std::vector<double> times;
  std::vector<uint32_t> ids;
  uint64_t lostQueueFull, lostTableFull, lostRestart;
  std::vector<std::string> restarts;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    times.swap(s->times);
    ids.swap(s->stackIds);
    restarts.swap(s->restarts);
    lostQueueFull = s->lostQueueFull;
    lostTableFull = s->lostTableFull;
    lostRestart = s->lostRestart;
    s->lostQueueFull = s->lostTableFull = s->lostRestart = 0;
  }
  v8::Local<v8::Object> out = v8::Object::New(isolate);
  auto set = [&](const char* key, v8::Local<v8::Value> value) { out->Set(context, Str(isolate, key), value).Check(); };
  v8::Local<v8::ArrayBuffer> tb = v8::ArrayBuffer::New(isolate, times.size() * sizeof(double));
  if (!times.empty()) memcpy(tb->Data(), times.data(), times.size() * sizeof(double));
  set("times", v8::Float64Array::New(tb, 0, times.size()));
  v8::Local<v8::ArrayBuffer> ib = v8::ArrayBuffer::New(isolate, ids.size() * sizeof(uint32_t));
  if (!ids.empty()) memcpy(ib->Data(), ids.data(), ids.size() * sizeof(uint32_t));
  set("stacks", v8::Uint32Array::New(ib, 0, ids.size()));
  {
    std::lock_guard<std::mutex> lock(tables.mu);
    const size_t frameCount = tables.frames.size();
    v8::Local<v8::Array> frames = v8::Array::New(isolate);
    uint32_t at = 0;
    for (size_t i = knownFrames; i < frameCount; i++) {
      const Frame& f = tables.frames[i];
      frames->Set(context, at++, Str(isolate, f.name)).Check();
      frames->Set(context, at++, Str(isolate, f.url)).Check();
      frames->Set(context, at++, v8::Integer::NewFromUnsigned(isolate, f.line)).Check();
      frames->Set(context, at++, v8::Integer::NewFromUnsigned(isolate, f.column)).Check();
    }
    set("frames", frames);
    const size_t stackWords = tables.stacks.size();
    const size_t from = static_cast<size_t>(knownStacks) * 2;
    const size_t n = stackWords > from ? stackWords - from : 0;
    v8::Local<v8::ArrayBuffer> sb = v8::ArrayBuffer::New(isolate, n * sizeof(uint32_t));
    if (n > 0) memcpy(sb->Data(), tables.stacks.data() + from, n * sizeof(uint32_t));
    set("stackDefs", v8::Uint32Array::New(sb, 0, n));
  }
  set("lostQueueFull", v8::Number::New(isolate, static_cast<double>(lostQueueFull)));
  set("lostTableFull", v8::Number::New(isolate, static_cast<double>(lostTableFull)));
  set("lostRestart", v8::Number::New(isolate, static_cast<double>(lostRestart)));
  v8::Local<v8::Array> reasons = v8::Array::New(isolate, static_cast<int>(restarts.size()));
  for (size_t i = 0; i < restarts.size(); i++) reasons->Set(context, static_cast<uint32_t>(i), Str(isolate, restarts[i])).Check();
  set("restarts", reasons);
  info.GetReturnValue().Set(out);
}

// waiting(ms): the threads whose oldest queued sample has waited longer than ms, or that stopped
// sampling with samples left (a worker terminated while it never yielded): another thread writes them.
void Waiting(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  const double ms = info.Length() > 0 ? info[0]->NumberValue(context).FromMaybe(0) : 0;
  const uint64_t now = uv_hrtime();
  v8::Local<v8::Array> out = v8::Array::New(isolate);
  uint32_t n = 0;
  std::lock_guard<std::mutex> lock(registry.mu);
  for (auto& [id, s] : registry.byThread) {
    std::lock_guard<std::mutex> queue(s->mu);
    const bool left = !s->sampling.load();
    const bool late = !s->times.empty() && static_cast<double>(now - s->queuedSinceNs) / 1e6 > ms;
    if (left || late) out->Set(context, n++, v8::Integer::NewFromUnsigned(isolate, id)).Check();
  }
  info.GetReturnValue().Set(out);
}

// prepare(): makes this thread's profiler now, logging code as V8 creates it, with the positions that
// tell an inlined function from its caller. A sampler started later (an attach) then starts warm (no
// cold start: the code map is there) and names functions inlined before it started, at the price of
// the code map's memory from now on.
void Prepare(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  ThreadSampler* s = SamplerOf(static_cast<IsolateData*>(info.Data().As<v8::External>()->Value()), isolate);
  if (s->prepared != nullptr || s->profiler != nullptr) return;
  v8::CpuProfiler::UseDetailedSourcePositionsForProfiling(isolate);
  s->prepared = v8::CpuProfiler::New(isolate, v8::kDebugNaming, v8::kEagerLogging);
}

// forgetSamples(n): for tests of the stuck-profiler case, the next n rotations of this thread find no
// sample, or until its profiler is replaced.
void ForgetSamples(const v8::FunctionCallbackInfo<v8::Value>& info) {
  ThreadSampler* s = Sampler(info);
  if (s != nullptr && info.Length() > 0 && info[0]->IsInt32()) s->forgetRotations = info[0]->Int32Value(info.GetIsolate()->GetCurrentContext()).FromJust();
}

// limitStacks(n): for tests of a full stack table, the process-wide table holds at most n stacks.
void LimitStacks(const v8::FunctionCallbackInfo<v8::Value>& info) {
  if (info.Length() < 1 || !info[0]->IsUint32()) return;
  std::lock_guard<std::mutex> lock(tables.mu);
  tables.maxStacks = info[0]->Uint32Value(info.GetIsolate()->GetCurrentContext()).FromJust();
}

void Cleanup(void* arg) {
  IsolateData* data = static_cast<IsolateData*>(arg);
  ThreadSampler* s = data->sampler;
  if (s == nullptr) return;
  StopRotating(s);
  s->sampling.store(false);
  // Disposing a profiler leaves its profiles' processor thread running (V8 only checks that none
  // runs): stopped first, or it signals a thread that is gone.
  v8::HandleScope scope(s->isolate);
  DisposeProfiler(s, false);
  if (s->prepared != nullptr) {
    s->prepared->Dispose();
    s->prepared = nullptr;
    s->frameCache.Release();
    s->memo.Release();
  }
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  PinThisAddon();
  v8::Isolate* isolate = context->GetIsolate();
  IsolateData* data = new IsolateData();
  node::AddEnvironmentCleanupHook(isolate, Cleanup, data);
  v8::Local<v8::External> external = v8::External::New(isolate, data);
  auto method = [&](const char* name, v8::FunctionCallback fn) {
    exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(), v8::FunctionTemplate::New(isolate, fn, external)->GetFunction(context).ToLocalChecked()).Check();
  };
  method("start", Start);
  method("stop", Stop);
  method("rotate", RotateNow);
  method("take", Take);
  method("waiting", Waiting);
  method("forgetSamples", ForgetSamples);
  method("prepare", Prepare);
  method("limitStacks", LimitStacks);
}
