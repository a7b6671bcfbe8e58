// Every addon of tracepipe's stays mapped once a thread has loaded it. Node unloads (dlclose) the
// addons a worker thread loaded as it ends, and code of theirs outlives that: the close callbacks of
// the libuv handles an addon closes in its environment's cleanup run afterwards, and the process-wide
// lists (session_registry.cc, the native drain's) are read from other threads. An addon that only a
// worker had loaded (another copy of tracepipe's, in that worker alone) crashed the process as the
// worker ended.
#ifndef TRACEPIPE_PIN_ADDON_H_
#define TRACEPIPE_PIN_ADDON_H_

#include <dlfcn.h>

namespace {

// Marks this addon's file as never to be unloaded (its handle is never closed either).
void PinThisAddon() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PinThisAddon), &info) != 0 && info.dli_fname != nullptr) {
    (void)dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

}  // namespace

#endif  // TRACEPIPE_PIN_ADDON_H_
