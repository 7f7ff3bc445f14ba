import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoKeyringStore } from '#lib/adapters/dynamodb/keyring';
import {
  KEYRING_REFRESH_MS,
  KeyringPublicKeys,
  PUBLISHED_KEYRING_REFRESH_MS,
} from '#lib/adapters/signing/keyring-keys';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { systemClock } from '#lib/platform/system';
import type { Fault } from '#test/support/fault-proxy';
import { expectUnavailable, useRuntimeBehindProxy } from '#test/support/fault-suite';
import { validBody } from '#test/support/fixtures';
import { type CallResult, call, createSessionCall } from '#test/support/local-runtime';
import { lostAnswer } from '#test/support/lost-answers';
import { putPublicBoard } from '#test/support/public-board';
import { LATE_MS } from '#test/support/short-aws-limits';

// The functions' AWS clients run with the short limits: a late DynamoDB costs a fraction of a second.
vi.mock('#lib/platform/aws-clients', async (original) =>
  (await import('#test/support/short-aws-limits')).withShortLimits(await original()),
);

/**
 * The keyring's GetItem on the signing keys table (lib/adapters/dynamodb/keyring.ts) failing, for the embed page's
 * hand-off and for discovery's JWKS. A function that has not read the keyring yet cannot sign nor
 * publish: it answers 503 with Retry-After, never a 500, and the caller's retry once DynamoDB answers
 * gets the hand-off (or the key set). A function that has read it keeps using the keyring it read when
 * its refresh fails: the keyring changes once a month, so the user is handed off as ever.
 *
 * The order of the tests matters: each function reads the keyring once per process, and the first
 * describe of each path runs while it has not. `refuse` closes the proxy's port for every table (the
 * session's read fails first), so it is the general outage suite's (unanswered.test.ts, failing.test.ts).
 */
const env = useRuntimeBehindProxy();

/** The ways the keyring's GetItem fails on every attempt, as `it.each` rows. */
const KEYRING_READ_FAULTS: Array<[string, Fault]> = [
  ['hangs', { kind: 'hang' }],
  ['throttles', { kind: 'throttle' }],
  ['answers InternalServerError', { kind: 'internal-error' }],
  ['resets the connection', { kind: 'reset' }],
  ['answers after the deadline', { kind: 'slow', delayMs: LATE_MS }],
];

/**
 * And the read whose first answer is lost: the SDK's retry reads the keyring. Only a function that read
 * it already meets it here, since on a cold one it would end the "not read yet" cases.
 */
const REFRESH_FAULTS: Array<[string, Fault]> = [
  ...KEYRING_READ_FAULTS,
  ['loses its first answer', lostAnswer('reset')],
];

const APP_URL = 'https://app.keyring-faults.test/board';
const APP_ORIGIN = 'https://app.keyring-faults.test';
const BOARD_ID = 'board_keyring_faults';

/** Applies `fault` to the GetItems on the signing keys table only. */
const injectOnKeyring = (fault: Fault) =>
  env().proxy.inject(fault, { operation: 'GetItem', table: LOCAL_TABLE_NAMES.signingKeys });

/** The keyring GetItems since `from`, as what the proxy did to each. */
const keyringReadsSince = (from: number) =>
  env()
    .proxy.requests.slice(from)
    .filter((r) => r.table === LOCAL_TABLE_NAMES.signingKeys)
    .map((r) => r.fault);

/**
 * Only `Date` is faked, and it keeps running (the servers' and the SDK's timers work as ever): moving it
 * on makes a function's keyring read due again without waiting for its refresh.
 */
beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  await putPublicBoard(env().runtime, BOARD_ID, 'org_keyring_faults', { name: 'App', appUrl: APP_URL });
});
afterAll(() => {
  vi.useRealTimers();
});

async function embedLink(): Promise<string> {
  const created = await createSessionCall(env().runtime, validBody({ boardId: BOARD_ID }));
  expect(created.status, created.text).toBe(201);
  return String(created.body.sessionToken);
}

const load = (token: string) =>
  call(env().runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });

const jwksCall = () => call(env().runtime, '/.well-known/jwks.json');

/** The keyring's published keys, read straight from the DynamoDB behind the proxy. */
async function publishedKeys() {
  const db = createDocumentClient({ endpoint: env().upstream, region: 'local' });
  try {
    return await new KeyringPublicKeys(
      new DynamoKeyringStore(db, LOCAL_TABLE_NAMES.signingKeys),
      systemClock,
    ).publicKeys();
  } finally {
    db.destroy();
  }
}

/** A hand-off to the board's application whose ID token verifies with the published keys. */
async function expectHandOff(answer: CallResult) {
  expect(answer.status, answer.text).toBe(200);
  const handoff = answer.body.handoff as { url: string; idToken: string };
  expect(handoff.url).toBe(APP_URL);
  const { payload } = await jwtVerify(handoff.idToken, createLocalJWKSet({ keys: await publishedKeys() }), {
    issuer: env().runtime.baseUrl,
    audience: APP_ORIGIN,
    algorithms: ['ES256'],
  });
  expect(payload.sid).toBeTypeOf('string');
}

describe('the embed page of a board with an application, before its function read the keyring', () => {
  it.each(KEYRING_READ_FAULTS)(
    'answers 503 with Retry-After, not 500, when the keyring read %s',
    async (_name, fault) => {
      const token = await embedLink();
      await injectOnKeyring(fault);
      const seen = env().proxy.requests.length;
      expectUnavailable(await load(token));
      expect(keyringReadsSince(seen)[0]).toBe(fault.kind);
    },
  );

  it('hands the user off on the retry once DynamoDB answers, the same link', async () => {
    const token = await embedLink();
    await injectOnKeyring({ kind: 'throttle' });
    expectUnavailable(await load(token));
    await env().proxy.clear();
    await expectHandOff(await load(token));
  });
});

describe('the embed page of a board with an application, once its function read the keyring', () => {
  it.each(REFRESH_FAULTS)(
    'still hands off with the keyring it read when its refresh %s',
    async (_name, fault) => {
      const token = await embedLink();
      // A refresh that succeeds first, so the keyring the failing refresh falls back on is a minute old,
      // within the time a stale keyring may still sign (KEYRING_MAX_AGE_MS), whatever ran before.
      vi.setSystemTime(Date.now() + KEYRING_REFRESH_MS + 1_000);
      await expectHandOff(await load(await embedLink()));
      vi.setSystemTime(Date.now() + KEYRING_REFRESH_MS + 1_000);
      await injectOnKeyring(fault);
      const seen = env().proxy.requests.length;
      await expectHandOff(await load(token));
      // The refresh was due and was tried: the page did not skip it.
      expect(keyringReadsSince(seen)[0]).toBe(fault.kind);
    },
  );
});

describe('GET /.well-known/jwks.json, before discovery read the keyring', () => {
  it.each(KEYRING_READ_FAULTS)(
    'answers 503 with Retry-After, not 500, and nothing a cache keeps, when the keyring read %s',
    async (_name, fault) => {
      await injectOnKeyring(fault);
      const answer = await jwksCall();
      expectUnavailable(answer);
      // A shared cache holding an outage's answer for the JWKS's five minutes would outlast the outage.
      expect(answer.headers.get('cache-control') ?? '').not.toMatch(/public|max-age=[1-9]/);
    },
  );

  it('publishes the keys on the retry once DynamoDB answers', async () => {
    await injectOnKeyring({ kind: 'internal-error' });
    expectUnavailable(await jwksCall());
    await env().proxy.clear();
    const answer = await jwksCall();
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.keys).toEqual(await publishedKeys());
  });
});

describe('GET /.well-known/jwks.json, once discovery read the keyring', () => {
  it.each(REFRESH_FAULTS)('publishes the keys it read when its refresh %s', async (_name, fault) => {
    vi.setSystemTime(Date.now() + PUBLISHED_KEYRING_REFRESH_MS + 1_000);
    await injectOnKeyring(fault);
    const seen = env().proxy.requests.length;
    const answer = await jwksCall();
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.keys).toEqual(await publishedKeys());
    expect(keyringReadsSince(seen)[0]).toBe(fault.kind);
  });
});
