import { setFlagsFromString } from 'node:v8';

// The tools stream millions of short-lived events. V8 samples each object literal's survival at a
// scavenge and, past 85 %, allocates that literal in old space from then on, for good. A sample taken
// while a batch of events happened to be alive (the reorder window's first release) did that to a
// per-event literal in 2 of 30 dumps of a 32 MB trace of 8,192 event types: old space then filled with
// dead events between full collections, and peak RSS went from 130-140 MB to 221-225 MB. Without
// pretenuring, 0 of 70 such runs rose above 139 MB. V8 reads the flag as it collects, so it is set
// before the tools allocate anything (it also holds for what they run in this process: DuckDB's
// bindings, the demo's sample application).
setFlagsFromString('--no-allocation-site-pretenuring');
