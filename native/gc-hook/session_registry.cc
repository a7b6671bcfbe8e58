// The sessions the threads of the process run, for a worker thread that starts later to join them
// at once: what worker_threads' environment data carried, which a thread cannot set without loading
// node:worker_threads, and node:stream with it (2–5 ms of a startup session, BENCHMARKS.md §42). A
// session's memory crosses isolates as its backing store, the rest of its descriptor as a string.
//
// Process-wide, as environment data was, across copies of tracepipe too: each copy's addon (another
// file) holds its own list, and a reader visits every loaded copy's through the C function below,
// found by name in each loaded addon.

#include "session_registry.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Published {
  const v8::Isolate* publisher;
  std::shared_ptr<v8::BackingStore> store;
  std::string info;
};

// Never destroyed: a thread may read as the process exits.
std::mutex* const published_mutex = new std::mutex();
auto* const published = new std::vector<Published>();

using Visit = void (*)(void* context, const std::shared_ptr<v8::BackingStore>& store, const char* info, size_t length);
using VisitAll = void (*)(Visit visit, void* context);
constexpr const char* kVisitSymbol = "tracepipe_visit_sessions_v1";

}  // namespace

// This copy's list, for every copy's reader (the name and the signature are the interface: a change
// to either is a new name).
extern "C" __attribute__((visibility("default"))) void tracepipe_visit_sessions_v1(Visit visit, void* context) {
  std::lock_guard<std::mutex> lock(*published_mutex);
  for (const Published& p : *published) visit(context, p.store, p.info.data(), p.info.size());
}

namespace {

// The loaded copies of this addon's file (tracepipe's, wherever each copy is installed), and no other
// library: opening and closing another's could be what unloads it, its destructors then running here.
// Only collected here: the loader holds its lock while it iterates, and dlopen takes it.
int FindCopies(dl_phdr_info* info, size_t, void* out) {
  constexpr const char kFile[] = "/native_drain.node";
  constexpr size_t kFileLength = sizeof(kFile) - 1;
  const char* name = info->dlpi_name;
  const size_t length = name == nullptr ? 0 : std::strlen(name);
  if (length >= kFileLength && std::strcmp(name + length - kFileLength, kFile) == 0) static_cast<std::vector<std::string>*>(out)->emplace_back(name, length);
  return 0;
}

// What each copy's list holds, copied out under that copy's lock (no JavaScript runs meanwhile).
std::vector<Published> ReadAllCopies() {
  std::vector<std::string> copies;
  dl_iterate_phdr(FindCopies, &copies);
  std::vector<VisitAll> visitors{&tracepipe_visit_sessions_v1};
  // Held until every list is read: a copy's file stays mapped (tracepipe's are never unloaded once
  // their init ran, pin_addon.h; these handles cover one whose init did not).
  std::vector<void*> handles;
  for (const std::string& name : copies) {
    void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    handles.push_back(handle);
    auto visit = reinterpret_cast<VisitAll>(dlsym(handle, kVisitSymbol));
    if (visit != nullptr && std::find(visitors.begin(), visitors.end(), visit) == visitors.end()) visitors.push_back(visit);
  }
  std::vector<Published> all;
  for (VisitAll visit : visitors) {
    visit([](void* out, const std::shared_ptr<v8::BackingStore>& store, const char* info, size_t length) { static_cast<std::vector<Published>*>(out)->push_back({nullptr, store, std::string(info, length)}); }, &all);
  }
  for (void* handle : handles) dlclose(handle);
  return all;
}

void Throw(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8(isolate, message).ToLocalChecked()));
}

}  // namespace

namespace tracepipe {

void PublishSessions(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (info.Length() < 1 || !info[0]->IsArray()) return Throw(isolate, "publishSessions([[sab, info], ...])");
  v8::Local<v8::Array> list = info[0].As<v8::Array>();
  std::vector<Published> mine;
  for (uint32_t i = 0; i < list->Length(); i++) {
    v8::Local<v8::Value> item;
    if (!list->Get(context, i).ToLocal(&item) || !item->IsArray() || item.As<v8::Array>()->Length() != 2) return Throw(isolate, "publishSessions([[sab, info], ...])");
    v8::Local<v8::Value> sab, text;
    if (!item.As<v8::Array>()->Get(context, 0).ToLocal(&sab) || !sab->IsSharedArrayBuffer() || !item.As<v8::Array>()->Get(context, 1).ToLocal(&text) || !text->IsString()) {
      return Throw(isolate, "publishSessions([[sab, info], ...])");
    }
    v8::String::Utf8Value utf8(isolate, text);
    mine.push_back({isolate, sab.As<v8::SharedArrayBuffer>()->GetBackingStore(), std::string(*utf8, utf8.length())});
  }
  std::lock_guard<std::mutex> lock(*published_mutex);
  published->erase(std::remove_if(published->begin(), published->end(), [isolate](const Published& p) { return p.publisher == isolate; }), published->end());
  for (Published& p : mine) published->push_back(std::move(p));
}

void PublishedSessions(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  std::vector<Published> all = ReadAllCopies();
  v8::Local<v8::Array> out = v8::Array::New(isolate, static_cast<int>(all.size()));
  for (uint32_t i = 0; i < all.size(); i++) {
    v8::Local<v8::String> text;
    if (!v8::String::NewFromUtf8(isolate, all[i].info.data(), v8::NewStringType::kNormal, static_cast<int>(all[i].info.size())).ToLocal(&text)) return;
    v8::Local<v8::Value> pair[] = {v8::SharedArrayBuffer::New(isolate, all[i].store), text};
    // Own properties: an array's setters (Array.prototype's, an application's) are not called.
    if (out->CreateDataProperty(context, i, v8::Array::New(isolate, pair, 2)).IsNothing()) return;
  }
  info.GetReturnValue().Set(out);
}

void ForgetPublished(v8::Isolate* isolate) {
  std::lock_guard<std::mutex> lock(*published_mutex);
  published->erase(std::remove_if(published->begin(), published->end(), [isolate](const Published& p) { return p.publisher == isolate; }), published->end());
}

}  // namespace tracepipe
