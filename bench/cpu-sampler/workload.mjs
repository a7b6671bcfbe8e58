// One measured run: the TypeScript compiler type-checks tracepipe's own sources once (a real, synchronous,
// allocation-heavy program nobody here wrote); prints wall and process CPU time of the checks
// (process CPU counts every thread: V8's profiler thread and tracepipe's own included), and when the
// checks began (the process's start-up, session start included).
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { reportResult } from '../support/variant-process.mjs';

const config = fileURLToPath(new URL('../../tsconfig.json', import.meta.url));
const parsed = ts.getParsedCommandLineOfConfigFile(config, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
const startedMs = performance.now();
const cpu0 = process.cpuUsage();
let diagnostics = 0;
for (let i = 0; i < 1; i++) {
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, noEmit: true } });
  diagnostics += ts.getPreEmitDiagnostics(program).length;
}
const cpu = process.cpuUsage(cpu0);
reportResult({ wallMs: performance.now() - startedMs, cpuMs: (cpu.user + cpu.system) / 1000, startedMs, diagnostics });
