import { demoApp } from './demo-provider.js';

const routes = ['/', '/users', '/users/:id', '/orders', '/health'];
const tables = ['users', 'orders', 'items'];

/** Simulated request handling that emits the demo events, for `durationMs`. Returns requests handled. */
export async function simulateRequests(durationMs: number, seed: number): Promise<number> {
  const end = performance.now() + durationMs;
  let n = 0;
  let x = seed;
  while (performance.now() < end) {
    const route = routes[n % routes.length]!;
    const t0 = performance.now();
    if (demoApp.RequestStart.enabled) demoApp.RequestStart.write(route, 100 + (n % 900));
    for (let q = 0; q < 3; q++) {
      const q0 = performance.now();
      for (let i = 0; i < 2000; i++) x = (x * 1103515245 + 12345) % 2147483648;
      if (demoApp.Query.enabled) demoApp.Query.write(tables[q]!, x % 100, performance.now() - q0);
    }
    for (let i = 0; i < 50; i++) if (demoApp.Tick.enabled) demoApp.Tick.write(i * 0.5, x, i, -i);
    if (demoApp.RequestStop.enabled) demoApp.RequestStop.write(route, n % 50 === 0 ? 500 : 200, performance.now() - t0);
    n++;
    if (n % 100 === 0) await new Promise((r) => setImmediate(r));
  }
  return n;
}
