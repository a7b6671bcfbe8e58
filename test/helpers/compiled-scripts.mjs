import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import typescript from 'typescript';

/** TypeScript source with the constructs whose emitted code moves around: classes, arrows, async, generics, enums, decorators' helpers. */
export const SAMPLE_TS = `// A small program in the shapes TypeScript rewrites.
export enum Colour { Red = 1, Green, Blue }

export interface Shape { area(): number }

export class Circle implements Shape {
  constructor(private readonly radius: number) {}
  area(): number {
    return Math.PI * this.radius ** 2;
  }
  static unit = new Circle(1);
}

export const double = <T extends number>(x: T): number => x * 2;

export async function total(shapes: Shape[]): Promise<number> {
  let sum = 0;
  for (const s of shapes) sum += await Promise.resolve(s.area());
  return sum;
}

export function* count(limit: number) {
  for (let i = 0; i < limit; i++) yield { i, colour: Colour[(i % 3) + 1] };
}

const { a, ...rest } = { a: 1, b: 2, c: 3 };
export const spread = { ...rest, a };
`;

/** TypeScript's own lib .d.ts files, parsed once per target for all compilations of a test file. */
const libFiles = new Map();

function hostWithCachedLibs(options) {
  const host = typescript.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const libDir = host.getDefaultLibLocation();
  host.getSourceFile = (fileName, language, ...rest) => {
    if (!fileName.startsWith(libDir)) return getSourceFile(fileName, language, ...rest);
    const key = `${options.target}:${fileName}`;
    if (!libFiles.has(key)) libFiles.set(key, getSourceFile(fileName, language, ...rest));
    return libFiles.get(key);
  };
  return host;
}

/**
 * Compiles `source` (a .ts file's text, named `name`) in `dir` as `tsc --sourceMap` (or
 * --inlineSourceMap) would, through TypeScript's compiler API in this process (a tsc process per file
 * takes seconds on a loaded machine), to `dir/out`; returns the paths of the .ts, the script and its map.
 */
export function compileTs(dir, name, source, { inline = false, sourceRoot, target = 'ES2017', module = 'CommonJS' } = {}) {
  const ts = join(dir, name);
  writeFileSync(ts, source);
  const options = { [inline ? 'inlineSourceMap' : 'sourceMap']: true, target: typescript.ScriptTarget[target], module: typescript.ModuleKind[module], outDir: join(dir, 'out'), strict: true, types: [], skipLibCheck: true, sourceRoot };
  const program = typescript.createProgram([ts], options, hostWithCachedLibs(options));
  const emitted = program.emit();
  const problems = [...typescript.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  if (emitted.emitSkipped || problems.length > 0) {
    throw new Error(`tsc ${name}: ${problems.map((d) => typescript.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`);
  }
  const script = join(dir, 'out', name.replace(/\.ts$/, '.js'));
  return { ts, script, map: inline ? undefined : `${script}.map` };
}

/** The JSON of a script's inline `data:application/json;base64,` source map. */
export function inlineMapOf(script) {
  const m = /\/\/# sourceMappingURL=data:application\/json;base64,(\S+)\s*$/.exec(readFileSync(script, 'utf8'));
  if (!m) throw new Error(`${script} has no inline source map`);
  return Buffer.from(m[1], 'base64').toString('utf8');
}
