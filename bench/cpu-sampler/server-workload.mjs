// One measured run of a program whose loop turns all the time and whose stacks are shallow: a fastify
// server (a web framework nobody here wrote) answering 20,000 JSON requests from a keep-alive client in
// the same process, 32 at a time. Prints wall and process CPU time of the requests, as workload.mjs does.
import { request, Agent } from 'node:http';
import Fastify from 'fastify';
import { reportResult } from '../support/variant-process.mjs';

const REQUESTS = 20_000;
const CONCURRENCY = 32;

const app = Fastify();
app.get('/items/:id', async (req) => ({ id: Number(req.params.id), items: Array.from({ length: 20 }, (_, i) => ({ i, name: `item ${i}`, tags: ['a', 'b'] })) }));
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address();
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

const get = (id) =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `/items/${id}`, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body.length) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });

const startedMs = performance.now();
const cpu0 = process.cpuUsage();
let next = 0;
let bytes = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < REQUESTS) bytes += await get(next++);
  }),
);
const cpu = process.cpuUsage(cpu0);
reportResult({ wallMs: performance.now() - startedMs, cpuMs: (cpu.user + cpu.system) / 1000, startedMs, bytes });
agent.destroy();
await app.close();
