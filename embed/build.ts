/**
 * Builds the package into dist/: the runtime, written from the service's host script (`HOST_CORE`, the
 * function /embed.js runs, byte for byte, and its error codes), then the typed wrapper around it, compiled
 * by tsc. Run by `npm run build:packages` at the repository's root, and before `npm pack`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_CORE, HOST_ERROR_CODES } from '../lib/adapters/http/embed/host-script';

const HERE = import.meta.dirname;
const DIST = join(HERE, 'dist');

/** The runtime module: the host script's logic as `createEmbedSession`, and its error codes. */
const RUNTIME_JS = `/*! @embed-session/embed runtime, written from the service's host script (lib/adapters/http/embed/host-script.ts): the function /embed.js runs. Do not edit. */
export const EMBED_ERROR_CODES = Object.freeze(${JSON.stringify(HOST_ERROR_CODES)});
export const createEmbedSession = ${HOST_CORE};
`;

/** Its types: the codes as a union, the function's signature from ./types. */
const RUNTIME_DTS = `import type { EmbedSessionApi } from './types.js';
/** The codes \`onError\` reports (docs/embedding.md, "Error codes"). */
export type EmbedErrorCode = ${HOST_ERROR_CODES.map((code) => `'${code}'`).join(' | ')};
export declare const EMBED_ERROR_CODES: readonly EmbedErrorCode[];
/** The host script's logic, run on \`window\`: what /embed.js defines as \`window.EmbedSession\`. */
export declare function createEmbedSession(window: Window): EmbedSessionApi;
`;

rmSync(DIST, { recursive: true, force: true });
mkdirSync(DIST, { recursive: true });
writeFileSync(join(DIST, 'runtime.js'), RUNTIME_JS);
writeFileSync(join(DIST, 'runtime.d.ts'), RUNTIME_DTS);
// The wrapper's own source imports ./runtime.js, found in dist/ through the tsconfig's rootDirs.
execFileSync(
  process.execPath,
  [join(HERE, '../node_modules/typescript/bin/tsc'), '-p', join(HERE, 'tsconfig.json')],
  {
    stdio: 'inherit',
  },
);
