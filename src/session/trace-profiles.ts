import { formatProviderSpec, parseProviderSpec } from './provider-spec.js';

/** A named set of providers, so users need not remember provider names, keywords and levels. */
export interface TraceProfile {
  readonly name: string;
  readonly description: string;
  /** Provider spec, dotnet-trace syntax. */
  readonly providers: string;
}

export const TRACE_PROFILES: readonly TraceProfile[] = [
  {
    name: 'default',
    description: 'runtime overview: GC, heap, event loop and process events at Informational',
    providers: 'Runtime.GC:*:Informational,Runtime.GCHeap:*:Informational,Runtime.EventLoop:*:Informational,Runtime.Process:*:Informational',
  },
  {
    name: 'gc-verbose',
    description: 'every GC and heap event at Verbose, plus process events',
    providers: 'Runtime.GC:*:Verbose,Runtime.GCHeap:*:Verbose,Runtime.Process:*:Informational',
  },
  {
    name: 'cpu',
    description: 'CPU samples every 1 ms on the timeline of GC pauses and event-loop stalls',
    providers: 'Runtime.CpuSampler:*:Informational,Runtime.GC:*:Informational,Runtime.EventLoop:*:Informational,Runtime.Process:*:Informational',
  },
  {
    name: 'all',
    description: 'every built-in provider (runtime and Node.js diagnostics channels) at Verbose',
    providers: 'Runtime.GC:*:Verbose,Runtime.GCHeap:*:Verbose,Runtime.EventLoop:*:Verbose,Runtime.Process:*:Verbose,Node.Channels:*:Verbose',
  },
];

export function findProfile(name: string): TraceProfile | undefined {
  return TRACE_PROFILES.find((p) => p.name === name);
}

/** A profile's providers with `extra` added; a provider named in both takes its settings from `extra`. */
export function withProviders(profile: TraceProfile, extra: string | undefined): string {
  if (extra === undefined) return profile.providers;
  const explicit = parseProviderSpec(extra);
  const kept = parseProviderSpec(profile.providers).filter((p) => !explicit.some((e) => e.name === p.name));
  return formatProviderSpec([...kept, ...explicit]);
}
