/** A mistake the user can fix (bad argument, missing file): printed as one line, no stack trace. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

/** A command line that does not fit the command's declaration: one line saying what is wrong, then the command's usage. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message, 2);
  }
}
