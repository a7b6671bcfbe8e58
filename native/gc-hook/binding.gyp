{
  "targets": [
    {
      "target_name": "gc_hook",
      "sources": ["gc_hook.cc"]
    }
  ]
}
