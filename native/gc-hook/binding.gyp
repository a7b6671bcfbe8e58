{
  "targets": [
    {
      "target_name": "gc_hook",
      "sources": ["gc_hook.cc"]
    },
    {
      "target_name": "heap_snapshot",
      "sources": ["heap_snapshot.cc", "snapshot_transcoder.cc"]
    },
    {
      "target_name": "loop_metrics",
      "sources": ["loop_metrics.cc"]
    },
    {
      "target_name": "signal_flush",
      "sources": ["signal_flush.cc"]
    },
    {
      "target_name": "cpu_sampler",
      "sources": ["cpu_sampler.cc"]
    },
    {
      "target_name": "native_drain",
      "sources": ["native_drain.cc", "session_registry.cc", "drain/drain_loop.cc", "drain/chunk_scanner.cc", "drain/trace_writer.cc"]
    },
    {
      "target_name": "promise_state",
      "sources": ["promise_state.cc"]
    },
    {
      "target_name": "code_cache",
      "sources": ["code_cache.cc"]
    }
  ]
}
