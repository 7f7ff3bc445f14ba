import type { BackgroundFunctionName } from '#lib/definitions/background';
import type { FunctionName } from '#lib/definitions/routes';

/**
 * The most bytes each function's bundle (index.mjs, its source map aside) may weigh: its size when the
 * budget was set, plus about 2 %. esbuild's output is deterministic, so `npm test` checks these
 * (test/integration/bundle.test.ts) and the benchmark keeps the timings.
 *
 * When a bundle outgrows its budget, find what grew before raising the figure: `npm run bench -- --quick`
 * lists a bundle's bytes by package, and esbuild's metafile (`metafile: true`) each input's. A new dependency of the
 * handler may be worth it; an SDK upgrade that brings back a module infra/bundling.ts swaps out (a
 * credential provider, the event-stream codec) is not, and is fixed in the swap. Lower a budget when a
 * bundle shrinks for good, so the margin stays small.
 *
 * Every function now holds the function table (lib/definitions), which decides the environment its code
 * sees (lib/definitions/environment.ts): 3 to 7 KB each, paid so that what a function reads and what its
 * stack gives it cannot drift apart. The key and member cut-off scopes and the operators' names then added
 * 1 to 2 KB to every function that reads or writes sessions, keys or boards. Listing and revoke-all then gained the status read from the index
 * entries and the partitions' reads (about 5 KB); the sweep its partitioned, side-by-side notes (about 1 KB).
 */
export const BUNDLE_BUDGET_BYTES: Record<FunctionName, number> = {
  createSession: 251_500,
  listSessions: 240_000,
  getSession: 227_500,
  revokeSession: 227_500,
  revokeUserSessions: 237_500,
  listEvents: 220_000,
  // The destination policy (lib/domain/destinations.ts: address ranges, IPv6 parsing) and the registry
  // that bounds an owner's endpoints took it from about 236 KB to 240.8 KB.
  createWebhook: 245_500,
  listWebhooks: 222_500,
  deleteWebhook: 222_500,
  authorizer: 213_500,
  // Every operator use case, the API Gateway usage-plan calls and the provisioning validators.
  provisioning: 259_500,
  embedPage: 261_000,
  // 14,436 bytes when the board script learned to end the page with the session (its timers, the watch,
  // the ended view: about 3 KB of the script served as written) and the host script to report once;
  // 29,189 when the host script learned to renew sessions across tabs, to report a frame that never
  // says ready and to give each error code a message (about 12 KB more of the script as written, which
  // the npm package ships too, so it is not minified), and the board script to post an error code.
  embedScript: 29_800,
  discovery: 60_500,
  health: 1_000,
  // The OpenAPI document it serves grew by the nine provisioning routes and their schemas (about 8.6 KB).
  docs: 60_500,
};

/**
 * The same, for the event pipeline's functions (lib/definitions/background.ts). Back-channel logout added
 * about 4 to 5 KB to the consumer and the sweep (the board repository, the app URL rule, the logout sink;
 * no KMS or JOSE code) and about 9 KB to delivery (the ID token signer and the logout attempt). The
 * logouts of a revoke-all added about 8 KB to delivery (the fan-out's steps, the cut-off rules, the
 * covered-sessions reads and the Query and Scan commands) and little to the consumer (starting them).
 * Sizing PutEvents calls by bytes added about 1 KB to the consumer; the destination policy checked at each
 * attempt (address ranges, IPv6 parsing, the pinned-address POST) about 4.5 KB to delivery.
 */
export const BACKGROUND_BUNDLE_BUDGET_BYTES: Record<BackgroundFunctionName, number> = {
  sessionStream: 228_000,
  expirySweep: 236_500,
  webhookDelivery: 249_500,
};
