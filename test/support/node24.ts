import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** A small npm project of its own, so the package's `node` bin never shadows the Node of npm scripts. */
const TOOL = join(import.meta.dirname, '..', '..', 'tools', 'node24');

/**
 * A Node 24 binary, the major version Lambda runs the functions on (nodejs24.x), for the tests and the
 * benchmark that run bundles under it as well as under the Node running them. It comes from the npm
 * package node-linux-<arch> (x64 or arm64), installed from tools/node24's lockfile by
 * `npm ci --prefix tools/node24` (.ci/run does); where it is missing, `NODE24` is undefined and
 * `NODE24_SKIP_REASON` says why, for the skip message.
 */
function findNode24(): { path: string } | { reason: string } {
  if (process.versions.node.startsWith('24.')) return { path: process.execPath };
  const path = join(TOOL, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node');
  if (process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch)) {
    return { reason: `node-linux-* has no binary for ${process.platform}-${process.arch}` };
  }
  if (!existsSync(path)) return { reason: `${path} is missing: run npm ci --prefix tools/node24` };
  const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
  return version.startsWith('v24.') ? { path } : { reason: `${path} is ${version}, not Node 24` };
}

const found = findNode24();

/** The Node 24 binary, or undefined when there is none here. */
export const NODE24: string | undefined = 'path' in found ? found.path : undefined;

/** Why there is no Node 24 here (empty when there is one). */
export const NODE24_SKIP_REASON: string = 'reason' in found ? `no Node 24: ${found.reason}` : '';
