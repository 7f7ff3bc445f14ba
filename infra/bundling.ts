import type { BuildOptions } from 'esbuild';

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
} as const;

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
    logLevel: 'silent',
  };
}
