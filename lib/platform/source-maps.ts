import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Readable stack traces for the minified Lambda bundles, paid for only when an error is logged.
 *
 * Node's `--enable-source-maps` would do this for every error, but it loads and parses the bundle's source
 * map on every cold start (5–15 ms here, up to a quarter of the functions' whole init; see the benchmark). Errors
 * are rare, so the map is read the first time a stack needs it and kept for the life of the process.
 */

/** A stack frame position in a JavaScript file: path or file URL, line and column (both 1-based). */
const FRAME_POSITION = /((?:file:\/\/)?\/[^\s()]+?\.m?js):(\d+):(\d+)/g;
const maps = new Map<string, SourceMap | null>();

/** The stack with every position in a source-mapped file rewritten to its original file, line and column. */
export function mapStackTrace(stack: string): string {
  return stack.replace(FRAME_POSITION, (position, file: string, line: string, column: string) => {
    const entry = sourceMapOf(file)?.findEntry(Number(line) - 1, Number(column) - 1);
    if (!entry || !('originalSource' in entry) || !entry.originalSource) return position;
    return `${entry.originalSource}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}

function sourceMapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    try {
      const path = file.startsWith('file:') ? fileURLToPath(file) : file;
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      // No map next to this file (a dependency, or unbundled code under tsx): keep its positions.
      map = null;
    }
    maps.set(file, map);
  }
  return map;
}
