/**
 * Stands in for `node:process` in the Lambda bundles only (infra/bundling.ts): the members of the global
 * `process` that bundled modules import by name (the SDK's user agent reads `env` and `versions`).
 *
 * An ES-module import of `node:process` makes Node build the module's facade, which reads every property
 * of `process` once, the lazy ones included (`allowedNodeEnvironmentFlags` parses all of Node's options):
 * about 1 ms of each cold start, for two properties the global already holds. Should a bundled module
 * import any other name, the build fails on the missing export rather than shipping it undefined.
 */

/** The same object as `process.env`: a variable set later is seen, as through the module. */
export const env = process.env;

/** The same object as `process.versions`. */
export const versions = process.versions;

export default process;
