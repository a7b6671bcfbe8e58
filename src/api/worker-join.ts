/**
 * A worker thread that imports tracepipe joins the process's sessions, which the main thread
 * announces (src/session/control-channel.ts). Sessions load on first use (src/machinery.ts), so the
 * worker loads them as it imports tracepipe while a session runs (at once where Node can, so its
 * first events are recorded), or when the first session opens later; the machinery's own channel
 * then asks the main thread for every live session. The main thread starts its sessions through
 * the machinery and watches nothing.
 */
import { loadSessionMachinery, loadSessionMachineryNow } from '../machinery.js';
import { errorMessage } from '../schema/error-message.js';
import { onChannelData } from '../session/channel-data.js';
import { CONTROL_CHANNEL } from '../session/control-names.js';
import { publishedSessions } from '../session/published-sessions.js';
import { isMainThread, workerThreads } from '../schema/this-thread.js';

function join(): void {
  if (loadSessionMachineryNow()) return;
  loadSessionMachinery().catch((e: unknown) => process.stderr.write(`tracepipe: this worker thread joins no session: ${errorMessage(e)}\n`));
}

if (!isMainThread()) {
  if (publishedSessions().length > 0) join();
  else {
    const channel = new (workerThreads().BroadcastChannel)(CONTROL_CHANNEL);
    const stopHearing = onChannelData(channel, (data) => {
      // Other workers' hellos are not sessions.
      if ((data as { type?: unknown } | null)?.type !== 'open') return;
      stopHearing();
      channel.close();
      join();
    });
    // Never keep a worker alive just to hear about sessions.
    (channel as unknown as { unref(): void }).unref();
    // The main thread answers with the sessions that run, should this thread have found none that
    // runs published (it reads no published list without the addon: control-channel.ts).
    channel.postMessage({ type: 'hello' });
  }
}
