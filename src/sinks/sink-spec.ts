/** How the owning thread describes a sink to the drain worker (it must survive structured clone). */
export type SinkSpec =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'port' };
