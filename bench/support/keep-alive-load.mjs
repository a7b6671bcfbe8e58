// A load of plain GET requests over keep-alive connections opened once, one request in flight on each:
// every run after the first reuses the same sockets, so a server measured between two runs sees no
// connection open or close in its window. Opening connections (a run of autocannon opens its own) made
// V8 deoptimise and recompile Node's http parser code in every measured window (BENCHMARKS.md §6).
import { connect } from 'node:net';

const HEAD_END = Buffer.from('\r\n\r\n');

/** `connections` sockets to `url`'s server, connected; `timeoutS` bounds each connect and run. */
export async function keepAliveLoad(url, { connections = 10, timeoutS = 120 } = {}) {
  const { hostname, port, pathname } = new URL(url);
  const request = Buffer.from(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
  const sockets = [];
  const opened = Array.from({ length: connections }, () => new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    sockets.push(s);
    s.once('error', reject);
  }));
  try {
    await bounded(Promise.all(opened), timeoutS, `connecting ${connections} sockets to ${url}`);
  } catch (e) {
    for (const s of sockets) s.destroy();
    throw e;
  }

  /** Sends requests on `s` while `take()` grants one, each after the previous response's last byte. */
  function serve(s, take) {
    return new Promise((resolve, reject) => {
      let pending = Buffer.alloc(0);
      const finish = (error) => {
        s.off('data', onData);
        s.off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const next = () => (take() ? s.write(request) : finish());
      const onClose = () => finish(new Error(`${url}: the server closed a keep-alive connection`));
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
      s.once('close', onClose);
      next();
    });
  }

  return {
    /** `amount` requests over the open connections; resolves once every response has arrived. */
    run(amount) {
      let granted = 0;
      const take = () => granted < amount && ++granted > 0;
      return bounded(Promise.all(sockets.map((s) => serve(s, take))), timeoutS, `${amount} requests to ${url}`);
    },
    close() {
      for (const s of sockets) s.destroy();
    },
  };
}

function bounded(promise, timeoutS, what) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done after ${timeoutS} s`)), timeoutS * 1000)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
