/**
 * The AWS SDK packages the Lambda bundles depend on by their insides, not only by their public API: those
 * whose modules infra/bundling.ts swaps (`alias`), whose module shapes lib/platform/lambda-*.ts mirror,
 * and those the signing and deadline code is checked against. Each is pinned to one exact version in
 * package.json (a direct dependency, or an `overrides` entry for the ones only the clients depend on), so
 * that no `npm install` moves one without the others; `npm run sdk:upgrade` moves them together
 * (infra/sdk-upgrade.ts), and test/infra/sdk-pins.test.ts fails when one moves alone.
 */
export const SDK_PINNED_PACKAGES = {
  /** The client every adapter sends through; its version names the SDK release the others follow. */
  '@aws-sdk/client-dynamodb': 'dependencies',
  /** Same release as the DynamoDB client: its peer. */
  '@aws-sdk/lib-dynamodb': 'dependencies',
  /** Same release: lib/platform/lambda-kms-client.mjs imports its command modules by path. */
  '@aws-sdk/client-kms': 'dependencies',
  /** The one link of the default chain lib/platform/lambda-credentials.ts keeps. */
  '@aws-sdk/credential-provider-env': 'dependencies',
  /** The HTTP handler lib/dynamodb/client.ts configures (timeouts that fire). */
  '@smithy/node-http-handler': 'dependencies',
  /** The SigV4 signer of the KMS JSON client (lib/signing/kms-client.ts), and the signer the bundles' signatures are compared with. */
  '@smithy/signature-v4': 'dependencies',
  /** Swapped for lib/platform/lambda-credentials.ts. */
  '@aws-sdk/credential-provider-node': 'overrides',
  /** Swapped for lib/platform/lambda-endpoint-discovery.ts. */
  '@aws-sdk/middleware-endpoint-discovery': 'overrides',
  /** Its `event-streams` entry is swapped for lib/platform/lambda-event-streams.ts. */
  '@smithy/core': 'overrides',
} as const satisfies Record<string, 'dependencies' | 'devDependencies' | 'overrides'>;

export type PinnedPackage = keyof typeof SDK_PINNED_PACKAGES;

/** The package a module specifier belongs to: `@smithy/core/event-streams` -> `@smithy/core`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/**
 * Whether `version` (x.y.z) satisfies `range` as npm reads the ranges the SDK declares: an exact version
 * or a caret range. Anything else is reported as unsupported rather than guessed.
 */
export function satisfies(version: string, range: string): boolean {
  const parse = (v: string) => v.split('.').map(Number) as [number, number, number];
  if (/^\d+\.\d+\.\d+$/.test(range)) return version === range;
  const caret = /^\^(\d+\.\d+\.\d+)$/.exec(range);
  if (!caret?.[1]) throw new Error(`Unsupported version range ${range}`);
  const [major, minor, patch] = parse(version);
  const [rMajor, rMinor, rPatch] = parse(caret[1]);
  if (major !== rMajor) return false;
  if (rMajor === 0 && minor !== rMinor) return false;
  return minor > rMinor || (minor === rMinor && patch >= rPatch);
}
