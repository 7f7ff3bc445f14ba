import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, buildSync, type Metafile, type OutputFile } from 'esbuild';
import type { FunctionDefinition } from '#lib/definitions/routes';

/** A module of infra/ by absolute path: esbuild resolves an alias from its working directory. */
const infraModule = (name: string) => join(dirname(fileURLToPath(import.meta.url)), name);

/**
 * How every function is bundled, in one place: the CDK stack runs esbuild with `esbuildOptions()` in
 * process (infra/constructs/service-function.ts), and the bundle tests and the benchmark build with
 * exactly the same options.
 *
 * ESM output resolving each package's ES-module build (`module` before `main`) lets esbuild tree-shake
 * the AWS SDK, which is bundled rather than taken from the runtime so its version is the one we tested.
 */
export const BUNDLING = {
  target: 'node24',
  mainFields: ['module', 'main'],
  minify: true,
  /** The file Lambda loads (handler `index.handler`): `index.mjs`, an ES module by its extension. */
  entryName: 'index',
  extension: '.mjs',
  /**
   * Code splitting: a module the code imports with `import()` (the signing adapters and KMS's client,
   * functions/keys.ts) goes into a chunk of its own that Node reads and evaluates only when that import
   * runs, and code shared by several chunks into a shared one. The chunks sit beside the entry as
   * `chunks/<module>-<content hash>.mjs` (`chunks/chunk-<hash>.mjs` for shared code).
   */
  chunkNames: 'chunks/[name]-[hash]',
  /**
   * A source map ships next to each file (`<file>.map`), for lib/platform/source-maps.ts to map logged
   * stacks with; without the sources themselves, which nothing in Lambda reads, it is a third of the size.
   */
  sourcesContent: false,
  /**
   * ESM bundles have no `require`; a CommonJS dependency that requires a Node built-in would throw
   * "Dynamic require is not supported" at run time without this shim. Every output file starts with it:
   * esbuild's require helper reads `require` in the chunk it lands in.
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
 * The esbuild options that bundle the function `entry` into the folder `outdir`, as Lambda runs it:
 * `index.mjs`, the chunks it imports, and a source map next to each. Nothing is external: the SDK is
 * bundled.
 */
export function esbuildOptions(entry: string, outdir: string): BuildOptions {
  return {
    entryPoints: { [BUNDLING.entryName]: entry },
    outdir,
    bundle: true,
    splitting: true,
    platform: 'node',
    target: BUNDLING.target,
    format: 'esm',
    outExtension: { '.js': BUNDLING.extension },
    chunkNames: BUNDLING.chunkNames,
    mainFields: [...BUNDLING.mainFields],
    minify: BUNDLING.minify,
    sourcemap: true,
    sourcesContent: BUNDLING.sourcesContent,
    banner: { js: BUNDLING.banner },
    alias: { ...BUNDLING.alias },
    logLevel: 'silent',
  };
}

/** A function's bundle: its JavaScript files and what esbuild made of its sources. */
export interface FunctionBundle {
  /** The entry (`<outdir>/index.mjs`) first, then the chunks it can load; absolute paths, maps aside. */
  files: string[];
  /** Their total size in bytes: what the size ceiling counts. */
  bytes: number;
  /** The entry and the chunks it imports statically: what Node loads before the handler runs. */
  atStart: { files: string[]; bytes: number };
  /** The files with their maps, as esbuild made them. */
  outputFiles: OutputFile[];
  /**
   * esbuild's metafile: `inputs` every module it read, `outputs` the files of the bundle (maps included),
   * each with the modules whose code it holds and the chunks it imports.
   */
  metafile: Metafile;
}

/**
 * Builds `options` (`esbuildOptions()`, or a variation of them) in memory and keeps the entry and every
 * chunk it can load, statically or through `import()`, each with its map: nothing else.
 *
 * esbuild makes a chunk of every module an `import()` anywhere in the module graph names, even when the
 * code holding that `import()` is tree-shaken away: every function reaches functions/keys.ts through the
 * composition root, but only those that sign or derive keep its imports of the signing adapters, and
 * only they ship those chunks.
 */
export function bundleOf(options: BuildOptions): FunctionBundle {
  const { outdir, absWorkingDir = process.cwd() } = options;
  if (!outdir) throw new Error('a bundle needs an outdir');
  const { metafile, outputFiles } = buildSync({ ...options, write: false, metafile: true });
  const absolute = (path: string) => resolve(absWorkingDir, path);
  const entry = resolve(absWorkingDir, outdir, `${BUNDLING.entryName}${BUNDLING.extension}`);
  const keyOf = new Map(Object.keys(metafile.outputs).map((key) => [absolute(key), key]));
  if (!keyOf.has(entry)) throw new Error(`esbuild made no ${entry}`);
  /** The entry and what it imports through edges of `kinds`, breadth first. */
  const reached = (kinds: string[]) => {
    const files = [entry];
    for (let i = 0; i < files.length; i++) {
      for (const edge of metafile.outputs[keyOf.get(files[i] as string) as string]?.imports ?? []) {
        const file = absolute(edge.path);
        if (!edge.external && kinds.includes(edge.kind) && keyOf.has(file) && !files.includes(file))
          files.push(file);
      }
    }
    return files;
  };
  const files = reached(['import-statement', 'dynamic-import']);
  const atStart = reached(['import-statement']);
  const kept = new Set(files.flatMap((file) => [file, `${file}.map`]));
  const outputs = Object.fromEntries(
    Object.entries(metafile.outputs).filter(([key]) => kept.has(absolute(key))),
  );
  const shipped = outputFiles.filter((file) => kept.has(file.path));
  const bytesOf = (paths: string[]) =>
    shipped
      .filter((file) => paths.includes(file.path))
      .reduce((total, file) => total + file.contents.byteLength, 0);
  return {
    files,
    bytes: bytesOf(files),
    atStart: { files: atStart, bytes: bytesOf(atStart) },
    outputFiles: shipped,
    metafile: { inputs: metafile.inputs, outputs },
  };
}

/** `bundleOf(options)`, written to its `outdir`. */
export function buildBundle(options: BuildOptions): FunctionBundle {
  const bundle = bundleOf(options);
  for (const file of bundle.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.contents);
  }
  return bundle;
}

/** The package files a function reads at run time (its definition's `files`), as absolute paths. */
export function shippedFiles(definition: Pick<FunctionDefinition, 'files'>): string[] {
  const require = createRequire(import.meta.url);
  return (definition.files ?? []).map((file) => require.resolve(file));
}

/** Copies them next to the bundle in `outDir`: the last step of bundling a function. */
export function shipFiles(definition: Pick<FunctionDefinition, 'files'>, outDir: string): void {
  for (const file of shippedFiles(definition)) copyFileSync(file, join(outDir, basename(file)));
}
