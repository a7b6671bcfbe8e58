// The sessions a thread of the process announces, for worker threads that start later (session_registry.cc).
#ifndef TRACEPIPE_SESSION_REGISTRY_H_
#define TRACEPIPE_SESSION_REGISTRY_H_

#include <v8.h>

namespace tracepipe {

// publishSessions([[sab, info], ...]): this thread's sessions from now on (info: a string, the rest of
// each one's descriptor), replacing what it published before.
void PublishSessions(const v8::FunctionCallbackInfo<v8::Value>& info);
// publishedSessions() → [[sab, info], ...]: what every thread of the process published, through every
// copy of tracepipe loaded in it.
void PublishedSessions(const v8::FunctionCallbackInfo<v8::Value>& info);
// Forgets what `isolate`'s thread published: its environment ends.
void ForgetPublished(v8::Isolate* isolate);

}  // namespace tracepipe

#endif  // TRACEPIPE_SESSION_REGISTRY_H_
