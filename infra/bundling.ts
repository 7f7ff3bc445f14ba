import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import type { FunctionDefinition } from '#lib/definitions/routes';

/** A module of infra/ by absolute path: esbuild resolves an alias from its working directory. */
const infraModule = (name: string) => join(dirname(fileURLToPath(import.meta.url)), name);

/**
 * How every function is bundled, in one place: the CDK stack passes these settings to NodejsFunction,
 * and the bundle test and the benchmark build with exactly the same esbuild options.
 *
 * ESM output resolving each package's ES-module build (`module` before `main`) lets esbuild tree-shake
 * the AWS SDK, which is bundled rather than taken from the runtime so its version is the one we tested.
 */
export const BUNDLING = {
  target: 'node24',
  format: 'esm',
  mainFields: ['module', 'main'],
  minify: true,
  /**
   * A source map ships next to each bundle, for lib/platform/source-maps.ts to map logged stacks with; without the
   * sources themselves, which nothing in Lambda reads, it is a third of the size.
   */
  sourceMap: true,
  sourcesContent: false,
  /** Nothing external: the SDK is bundled. */
  externalModules: [] as string[],
  /**
   * ESM bundles have no `require`; a CommonJS dependency that requires a Node built-in would throw
   * "Dynamic require is not supported" at run time without this shim.
   */
  banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
  /**
   * The one module replaced in every Lambda bundle, and only there (the local runtime, the admin CLI and
   * the tests run from source with the SDK's own): the default credential provider chain (SSO, INI
   * files, credential processes, web identity, container and instance metadata, and the STS and SSO
   * clients they need) becomes a provider that reads the environment, where Lambda puts a function's
   * credentials. It is over a third of each bundle; see docs/performance.md#credentials-from-the-environment.
   */
  alias: {
    '@aws-sdk/credential-provider-node': infraModule('lambda-credentials.ts'),
  } as Record<string, string>,
} as const;

/**
 * The AWS SDK settings every Lambda function is deployed with: the SDK's own defaults, written down. The SDK
 * looks up each setting it is not given in the environment, then in `~/.aws/config` and
 * `~/.aws/credentials`, files a Lambda function never has; the first lookup that reaches them costs the
 * first request two failed reads on libuv's thread pool (started for them): 2–3 ms of every cold start.
 * With every setting the client's first request reads given here, it reads no file. A test fails when an
 * SDK upgrade reads a setting this list misses (test/integration/lambda-credentials.test.ts). The local
 * runtime, the admin CLI and the tests do not get them: they run where profiles live.
 */
export const LAMBDA_SDK_ENVIRONMENT = {
  AWS_USE_FIPS_ENDPOINT: 'false',
  AWS_USE_DUALSTACK_ENDPOINT: 'false',
  AWS_RETRY_MODE: 'standard',
  AWS_ACCOUNT_ID_ENDPOINT_MODE: 'preferred',
  AWS_AUTH_SCHEME_PREFERENCE: 'sigv4',
  AWS_DISABLE_CLOCK_SKEW_CORRECTION: 'false',
  /** Not a default: names this service in the SDK's user agent (CloudTrail's userAgent field). */
  AWS_SDK_UA_APP_ID: 'embed-session-service',
  /** The functions use DynamoDB's regional endpoint; no endpoint URL is configured for them anywhere. */
  AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true',
} as const satisfies Record<string, string>;

/**
 * The aliases as NodejsFunction's `esbuildArgs` (`--alias:from=to` on esbuild's command line), so the
 * stack's bundles are the ones `esbuildOptions` builds; test/infra checks they are byte-identical.
 */
export function aliasArgs(): { '--alias': string[] } {
  return { '--alias': Object.entries(BUNDLING.alias).map(([from, to]) => `${from}=${to}`) };
}

/** The esbuild options equivalent to the CDK bundling of `entry` into `outfile`. */
export function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: BUNDLING.target,
    format: BUNDLING.format,
    mainFields: [...BUNDLING.mainFields],
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    sourcesContent: BUNDLING.sourcesContent,
    external: [...BUNDLING.externalModules],
    banner: { js: BUNDLING.banner },
    alias: { ...BUNDLING.alias },
    logLevel: 'silent',
  };
}

/** The package files a function reads at run time (its definition's `files`), as absolute paths. */
export function shippedFiles(definition: Pick<FunctionDefinition, 'files'>): string[] {
  const require = createRequire(import.meta.url);
  return (definition.files ?? []).map((file) => require.resolve(file));
}

/** The shell commands that copy them next to the bundle: what the CDK bundling runs after esbuild. */
export function shipFilesCommands(
  definition: Pick<FunctionDefinition, 'files'>,
  outputDir: string,
): string[] {
  return shippedFiles(definition).map(
    (file) => `cp ${JSON.stringify(file)} ${JSON.stringify(`${outputDir}/`)}`,
  );
}

/** Copies them next to a bundle in `outDir`, as the CDK bundling does (for the bundle test and the bench). */
export function shipFiles(definition: Pick<FunctionDefinition, 'files'>, outDir: string): void {
  for (const file of shippedFiles(definition)) copyFileSync(file, join(outDir, basename(file)));
}
