/**
 * `npm run sdk:upgrade [-- <version>]`: moves every pinned SDK package (infra/sdk-pins.ts) together to
 * the release of `@aws-sdk/client-dynamodb` given (the latest by default), writing exact versions into
 * package.json, then installs them. The clients take that release; every other package takes the
 * newest version the range the client release (or the credential chain it depends on) declares
 * allows, so the pins are a set the SDK itself would install. Then run the tests the script prints.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PinnedPackage, SDK_PINNED_PACKAGES } from '#infra/sdk-pins';

const ROOT = join(import.meta.dirname, '..');
const PACKAGE_JSON = join(ROOT, 'package.json');

function npmView(spec: string, field: string): unknown {
  const out = execFileSync('npm', ['view', spec, field, '--json'], { encoding: 'utf8', cwd: ROOT }).trim();
  return out === '' ? undefined : JSON.parse(out);
}

/** The newest published version of `name` within `range`. */
function newest(name: string, range: string): string {
  const found = npmView(`${name}@${range}`, 'version');
  const versions = [found].flat().filter((v): v is string => typeof v === 'string');
  const last = versions.at(-1);
  if (!last) throw new Error(`No published version of ${name} matches ${range}`);
  return last;
}

function dependencyRange(name: string, version: string, dependency: string): string {
  const dependencies = npmView(`${name}@${version}`, 'dependencies') as Record<string, string> | undefined;
  const range = dependencies?.[dependency];
  if (!range)
    throw new Error(`${name}@${version} no longer depends on ${dependency}: review infra/sdk-pins.ts`);
  return range;
}

/** The newest published version of `dependency` within the range `name@version` asks for. */
function newestDependency(name: string, version: string, dependency: string): string {
  return newest(dependency, dependencyRange(name, version, dependency));
}

const release = process.argv[2] ?? newest('@aws-sdk/client-dynamodb', 'latest');
const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8'));
const current = (name: PinnedPackage): string => pkg[SDK_PINNED_PACKAGES[name]][name];

const credentialChain = newestDependency(
  '@aws-sdk/client-dynamodb',
  release,
  '@aws-sdk/credential-provider-node',
);
const versions: Record<PinnedPackage, string> = {
  '@aws-sdk/client-dynamodb': release,
  '@aws-sdk/lib-dynamodb': newest('@aws-sdk/lib-dynamodb', release),
  '@aws-sdk/client-kms': newest('@aws-sdk/client-kms', release),
  '@aws-sdk/credential-provider-node': credentialChain,
  '@aws-sdk/credential-provider-env': newestDependency(
    '@aws-sdk/credential-provider-node',
    credentialChain,
    '@aws-sdk/credential-provider-env',
  ),
  '@aws-sdk/middleware-endpoint-discovery': newestDependency(
    '@aws-sdk/client-dynamodb',
    release,
    '@aws-sdk/middleware-endpoint-discovery',
  ),
  '@smithy/core': newestDependency('@aws-sdk/client-dynamodb', release, '@smithy/core'),
  '@smithy/node-http-handler': newestDependency(
    '@aws-sdk/client-dynamodb',
    release,
    '@smithy/node-http-handler',
  ),
  // Not a dependency of the clients: the newest of the major the project uses.
  '@smithy/signature-v4': newest('@smithy/signature-v4', `^${current('@smithy/signature-v4')}`),
};

for (const [name, version] of Object.entries(versions) as [PinnedPackage, string][]) {
  const section = SDK_PINNED_PACKAGES[name];
  pkg[section] ??= {};
  if (current(name) !== version) console.log(`${name}: ${current(name)} -> ${version}`);
  pkg[section][name] = version;
}
writeFileSync(PACKAGE_JSON, `${JSON.stringify(pkg, null, 2)}\n`);
execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
console.log(
  [
    'Pinned SDK packages moved together. Now run:',
    '  npx vitest run test/infra/sdk-pins.test.ts test/integration/bundle.test.ts \\',
    '    test/integration/lambda-credentials.test.ts test/unit/lib/platform test/unit/lib/dynamodb',
    'and, if a bundle outgrew its budget, read why before raising it (infra/bundle-budgets.ts).',
  ].join('\n'),
);
