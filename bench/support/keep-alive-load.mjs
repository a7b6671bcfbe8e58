// A load of plain GET requests over keep-alive connections opened once, one request in flight on each:
// every run after the first reuses the same sockets, so a server measured between two runs sees no
// connection open or close in its window. New connections for each run (as a run of autocannon opens)
// made V8 deoptimise and recompile Node's http code inside the measured window (BENCHMARKS.md §6).
import { connect } from 'node:net';

const HEAD_END = Buffer.from('\r\n\r\n');

/** `connections` sockets to `url`'s server, connected; `timeoutS` bounds each connect and run. */
export async function keepAliveLoad(url, { connections = 10, timeoutS = 120 } = {}) {
  const { hostname, port, pathname, search } = new URL(url);
  const request = Buffer.from(`GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
  const sockets = [];
  // Why a socket is unusable, from the moment it is (a closed socket takes writes silently): the
  // server closed it (its keep-alive timeout between two runs, say) or it failed.
  let broken;
  let onBroken = () => {};
  const opened = Array.from({ length: connections }, () => new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    sockets.push(s);
    s.on('error', (e) => {
      broken ??= new Error(`${url}: a keep-alive connection failed: ${e.message}`);
      reject(broken);
    });
    s.on('close', () => {
      broken ??= new Error(`${url}: the server closed a keep-alive connection`);
      reject(broken);
      onBroken();
    });
  }));
  const close = () => {
    for (const s of sockets) s.destroy();
  };
  try {
    await bounded(Promise.all(opened), timeoutS, `connecting ${connections} sockets to ${url}`);
  } catch (e) {
    close();
    throw e;
  }

  /** Sends requests on `s` while `take()` grants one, each after the previous response's last byte. */
  function serve(s, take) {
    return new Promise((resolve, reject) => {
      let pending = Buffer.alloc(0);
      const finish = (error) => {
        s.off('data', onData);
        if (error) reject(error);
        else resolve();
      };
      const next = () => (take() ? s.write(request) : finish());
      function onData(chunk) {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        for (;;) {
          const end = pending.indexOf(HEAD_END);
          if (end < 0) return;
          const head = pending.subarray(0, end).toString('latin1');
          const length = /\r\ncontent-length: *(\d+)/i.exec(head);
          if (!head.startsWith('HTTP/1.1 200') || length === null) return finish(new Error(`${url}: unexpected response '${head.split('\r\n')[0]}' (a 200 with a content-length expected)`));
          const total = end + HEAD_END.length + Number(length[1]);
          if (pending.length < total) return;
          pending = pending.subarray(total);
          next();
        }
      }
      s.on('data', onData);
      next();
    });
  }

  return {
    /** `amount` requests over the open connections; resolves once every response has arrived. */
    run(amount) {
      if (broken) return Promise.reject(broken);
      let granted = 0;
      const take = () => granted < amount && ++granted > 0;
      const failed = new Promise((_, reject) => (onBroken = () => reject(broken)));
      return bounded(Promise.race([Promise.all(sockets.map((s) => serve(s, take))), failed]), timeoutS, `${amount} requests to ${url}`).finally(() => (onBroken = () => {}));
    },
    close,
  };
}

function bounded(promise, timeoutS, what) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done after ${timeoutS} s`)), timeoutS * 1000)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
