/** How the owning thread describes a sink to the drain worker (it must survive structured clone). */
export type SinkSpec =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'port' }
  /** A connected socket's descriptor the drain writes to directly; `prologue` goes out before the trace. */
  | { readonly kind: 'fd'; readonly fd: number; readonly prologue?: Uint8Array };
