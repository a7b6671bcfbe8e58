import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CpuFrame, CpuProfile } from './cpu-profile.js';
import { decodeSourceMap, type DecodedSourceMap } from './source-map-decoder.js';

/** What withSourceMaps did: how many frames it mapped and which maps it could not use. */
export interface SourceMapSummary {
  /** Scripts with a source map that mapped at least one frame. */
  readonly mappedScripts: number;
  readonly mappedFrames: number;
  /** Scripts that could not be read to look for a map (moved, deleted, or traced on another machine). */
  readonly unreadableScripts: readonly string[];
  /** One line per map that a script names or has beside it but that could not be used: the script and why. */
  readonly failedMaps: readonly string[];
}

/**
 * The profile with each frame of a source-mapped script at its original location (SourceMapper.map).
 * Frames stay one per generated frame, so two of them may show the same original location.
 */
export function withSourceMaps(profile: CpuProfile): CpuProfile {
  const mapper = new SourceMapper();
  const frames = profile.frames.map((frame) => mapper.map(frame));
  return { ...profile, frames, sourceMaps: mapper.summary() };
}

/**
 * Puts frames at their original location one at a time, for views that take frames as they come
 * (withSourceMaps does a whole profile). A frame of a source-mapped script gets the original source,
 * line, column, and name where the map gives one, the generated frame kept as `generated`. A
 * script's map is the one its `//# sourceMappingURL=` comment names (a file or a `data:` URL), else
 * the `.map` file beside it; scripts are read by the frame's URL (file: URLs and absolute paths;
 * node: and other schemes are left alone), each once. A frame whose script has no usable map, or
 * whose position the map does not cover, stays as it is; what could not be used is in summary(),
 * never thrown.
 */
export class SourceMapper {
  private readonly unreadable: string[] = [];
  private readonly failed: string[] = [];
  private readonly byPath = new Map<string, DecodedSourceMap | undefined>();
  /** The same by URL, so that each frame costs one look-up, not a URL's conversion to a path. */
  private readonly byUrl = new Map<string, DecodedSourceMap | undefined>();
  private readonly mappedScripts = new Set<DecodedSourceMap>();
  private mappedFrames = 0;

  map(frame: CpuFrame): CpuFrame {
    if (frame.line <= 0 || frame.column <= 0) return frame;
    const map = this.mapOf(frame.url);
    // CpuFrame positions are 1-based, a map's 0-based.
    const original = map?.originalPositionFor(frame.line - 1, frame.column - 1);
    if (!map || !original) return frame;
    this.mappedScripts.add(map);
    this.mappedFrames++;
    return {
      functionName: original.name ?? frame.functionName,
      url: isFileUrl(frame.url) ? original.source : asPath(original.source),
      line: original.line + 1,
      column: original.column + 1,
      generated: frame,
    };
  }

  summary(): SourceMapSummary {
    return { mappedScripts: this.mappedScripts.size, mappedFrames: this.mappedFrames, unreadableScripts: [...this.unreadable], failedMaps: [...this.failed] };
  }

  /** Each script's map, looked for once (by its path, however the frames name the script). */
  private mapOf(url: string): DecodedSourceMap | undefined {
    if (this.byUrl.has(url)) return this.byUrl.get(url);
    const path = scriptPath(url);
    if (path !== undefined && !this.byPath.has(path)) this.byPath.set(path, this.load(path));
    const map = path === undefined ? undefined : this.byPath.get(path);
    this.byUrl.set(url, map);
    return map;
  }

  private load(path: string): DecodedSourceMap | undefined {
    let script: string;
    try {
      script = readFileSync(path, 'utf8');
    } catch {
      this.unreadable.push(path);
      return undefined;
    }
    const scriptUrl = pathToFileURL(path).href;
    const named = sourceMappingUrl(script);
    let mapUrl: string;
    let text: string;
    try {
      if (named === undefined) {
        mapUrl = `${scriptUrl}.map`;
        try {
          text = readFileSync(`${path}.map`, 'utf8');
        } catch (e) {
          // No comment and no map beside it: a script that has none, which is no failure.
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
          throw e;
        }
      } else if (named.startsWith('data:')) {
        mapUrl = scriptUrl;
        text = dataUrlText(named);
      } else {
        mapUrl = new URL(named, scriptUrl).href;
        if (!isFileUrl(mapUrl)) throw new Error(`${mapUrl} is not a file (only files and data: URLs are read)`);
        text = readFileSync(fileURLToPath(mapUrl), 'utf8');
      }
    } catch (e) {
      this.failed.push(`the source map of ${path} (${where(named, path)}) could not be read: ${(e as Error).message}; its frames keep the generated location`);
      return undefined;
    }
    try {
      return decodeSourceMap(text, mapUrl);
    } catch (e) {
      this.failed.push(`the source map of ${path} (${where(named, path)}) is not usable: ${(e as Error).message}; its frames keep the generated location`);
      return undefined;
    }
  }
}

/** Lines for a view's notes: what was mapped, and each map or script that could not be used, once. */
export function sourceMapNotes(summary: SourceMapSummary): string[] {
  const notes: string[] = [];
  if (summary.mappedFrames > 0) {
    notes.push(`${summary.mappedFrames} frame${summary.mappedFrames === 1 ? '' : 's'} of ${summary.mappedScripts} script${summary.mappedScripts === 1 ? '' : 's'} shown at their original location through source maps`);
  }
  const unreadable = summary.unreadableScripts;
  if (unreadable.length > 0) {
    notes.push(`${unreadable.length} script${unreadable.length === 1 ? '' : 's'} could not be read to look for a source map (${unreadable.slice(0, 3).join(', ')}${unreadable.length > 3 ? ', …' : ''}): their frames keep the generated location`);
  }
  notes.push(...summary.failedMaps);
  return notes;
}

function isFileUrl(url: string): boolean {
  return url.startsWith('file:');
}

/** A script's URL as V8 names it, as a file path, if it is one: a file: URL or an absolute path (not another scheme). */
function scriptPath(url: string): string | undefined {
  if (isFileUrl(url)) {
    try {
      return fileURLToPath(url);
    } catch {
      return undefined;
    }
  }
  return isAbsolute(url) && !/^[a-z][a-z0-9+.-]+:/i.test(url) ? url : undefined;
}

/** A script named by path gets its original sources named by path too. */
function asPath(source: string): string {
  if (!isFileUrl(source)) return source;
  try {
    return fileURLToPath(source);
  } catch {
    return source;
  }
}

/**
 * The URL of the trailing `//# sourceMappingURL=` comment (or `/*# … *\/`, or the older `@` for `#`):
 * only line comments and blank lines may follow it, so the text in a string literal is not taken.
 */
function sourceMappingUrl(script: string): string | undefined {
  let end = script.length;
  while (end > 0) {
    const start = script.lastIndexOf('\n', end - 1) + 1;
    const line = script.slice(start, end).trim();
    end = start - 1;
    if (line === '') continue;
    const m = /^\/(?:\/[#@]\s*sourceMappingURL=(\S+)|\*[#@]\s*sourceMappingURL=(\S+?)\s*\*\/)$/.exec(line);
    if (m) return m[1] ?? m[2];
    if (!line.startsWith('//')) return undefined;
  }
  return undefined;
}

/** The JSON of a `data:` URL of media type application/json (base64 or percent-encoded). */
function dataUrlText(url: string): string {
  const comma = url.indexOf(',');
  if (comma < 0) throw new Error('a data: URL without a comma');
  const meta = url.slice('data:'.length, comma).split(';').map((p) => p.trim().toLowerCase());
  if (meta[0] !== 'application/json') throw new Error(`a data: URL of media type '${meta[0]}', not application/json`);
  const data = url.slice(comma + 1);
  return meta.includes('base64') ? Buffer.from(data, 'base64').toString('utf8') : decodeURIComponent(data);
}

/** Where a script's map was looked for, for people. */
function where(named: string | undefined, path: string): string {
  if (named === undefined) return `${path}.map`;
  return named.startsWith('data:') ? 'inline' : named;
}

