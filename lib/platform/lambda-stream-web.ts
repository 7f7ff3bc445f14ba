/**
 * Stands in for `node:stream/web` in the Lambda bundles only (infra/bundling.ts). @middy/core imports
 * `ReadableStream` from it for its response-streaming mode alone (an `instanceof` test of a streamed
 * body), which no function here uses; yet that import makes Node load the whole Web Streams module, its
 * adapters, compression and text-encoding streams with it, before the first line runs: about 3 ms of
 * every cold start. This object answers `instanceof` as the real one does, reaching the global
 * `ReadableStream` only when asked. Should a bundled module import any other name, the build fails on
 * the missing export rather than shipping it undefined.
 */
export const ReadableStream = {
  [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof globalThis.ReadableStream;
  },
};
