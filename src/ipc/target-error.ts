/** A process that cannot be attached to; its own module so that `import 'tracepipe'` has it without the client. */
export class TargetError extends Error {
  override readonly name = 'TargetError';
}
