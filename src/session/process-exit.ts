/**
 * One 'exit' listener for all of tracepipe on this thread, calling its hooks in the order they were
 * added. Each listener tracepipe adds counts toward the application's own: with one per module, an
 * application with eight 'exit' listeners of its own got a MaxListenersExceededWarning only when
 * traced. This one still counts, so the ninth of the application's own warns a listener early.
 */
const hooks: (() => void)[] = [];
let listening = false;

function runHooks(): void {
  for (const hook of [...hooks]) hook();
}

/** Runs `hook` as this thread exits; the returned function takes it back. */
export function onProcessExit(hook: () => void): () => void {
  hooks.push(hook);
  if (!listening) {
    listening = true;
    process.on('exit', runHooks);
  }
  return () => {
    const i = hooks.indexOf(hook);
    if (i >= 0) hooks.splice(i, 1);
  };
}
