import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jwks, openIdConfiguration } from '#lib/adapters/http/embed/discovery';
import { KeyRotation, KeyringPublicKeys, KeyringSigner } from '#lib/adapters/signing/keyring-keys';
import type { IdTokenClaims } from '#lib/domain/id-token';
import { LOCAL_ROTATION } from '#lib/domain/keyring';
import { systemClock } from '#lib/platform/system';
import { CountingKeyEncryption, InMemoryKeyringStore } from '#test/support/keyring';
import { TokenVerifier } from '../../../examples/board-app/verify';

/**
 * The reference board application across key rotations, with the JWKS it caches (jose's
 * createRemoteJWKSet: kept ten minutes, fetched again on a `kid` it has not seen, at most every 30 s).
 * The stage's keys run on a keyring in memory, served over HTTP as the discovery function serves it;
 * only the Date is faked, so the application's cache and the keyring's schedule move together.
 */
const MINUTE = 60_000;
const AUDIENCE = 'http://127.0.0.1:3001';

let server: Server;
let issuer = '';
let jwksFetches = 0;
const store = new InMemoryKeyringStore();
const rotation = new KeyRotation(store, new CountingKeyEncryption(), systemClock, LOCAL_ROTATION);
const signer = new KeyringSigner(store, new CountingKeyEncryption(), systemClock, 1);
const published = new KeyringPublicKeys(store, systemClock, 1);

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-03-01T00:00:00.000Z'));
  server = createServer((req, res) => {
    void (async () => {
      const isJwks = req.url === '/.well-known/jwks.json';
      if (isJwks) jwksFetches++;
      const body = isJwks ? jwks(await published.publicKeys()) : openIdConfiguration(issuer);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await rotation.scheduled();
});
afterAll(async () => {
  vi.useRealTimers();
  server?.close();
});

let n = 0;
/** A hand-off token signed now by the stage's current key. */
function handOffToken(): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  n += 1;
  const claims: IdTokenClaims = {
    iss: issuer,
    aud: AUDIENCE,
    sub: `sub-${n}`,
    tid: 'tenant',
    user_id: `customer-${n}`,
    email: 'ada@example.com',
    given_name: null,
    family_name: null,
    picture: null,
    plan: null,
    metadata: {},
    board_id: 'board_1',
    board_name: null,
    sid: `ses_${n}`,
    iat,
    exp: iat + 300,
    session_exp: iat + 3600,
    jti: `jti-${n}`,
  };
  return signer.sign(claims);
}

const advance = (ms: number) => vi.setSystemTime(new Date(Date.now() + ms));

describe('the reference board application across a key rotation', () => {
  it('fetches the JWKS again on a new kid, accepts every key’s tokens while they hold, and drops a retired key', async () => {
    const app = new TokenVerifier({ issuer, audience: AUDIENCE });
    const first = await handOffToken();
    await expect(app.verifyHandOff(first)).resolves.toMatchObject({ sub: 'sub-1' });
    expect(jwksFetches).toBe(1);

    // A scheduled rotation publishes the next key; the old one still signs for the publication lead.
    advance(LOCAL_ROTATION.rotateEveryMs - LOCAL_ROTATION.publishAheadMs);
    expect((await rotation.scheduled()).outcome).toBe('scheduled');
    advance(LOCAL_ROTATION.publishAheadMs - 30_000);
    const lastOfOld = await handOffToken();
    advance(30_000);
    const ofNext = await handOffToken();
    expect(decodeProtectedHeader(ofNext).kid).not.toBe(decodeProtectedHeader(lastOfOld).kid);

    // The application meets a kid it has not cached, fetches the JWKS once more, and accepts both.
    await expect(app.verifyHandOff(ofNext)).resolves.toMatchObject({ sub: 'sub-3' });
    expect(jwksFetches).toBe(2);
    await expect(app.verifyHandOff(lastOfOld)).resolves.toMatchObject({ sub: 'sub-2' });

    // A compromised key retired at once: the next key signs at once, and the app fetches it on the miss.
    const compromised = decodeProtectedHeader(ofNext).kid as string;
    const stolen = await handOffToken();
    advance(MINUTE);
    expect((await rotation.retire(compromised)).outcome).toBe('retired');
    const afterRetirement = await handOffToken();
    expect(decodeProtectedHeader(afterRetirement).kid).not.toBe(compromised);
    await expect(app.verifyHandOff(afterRetirement)).resolves.toMatchObject({ sub: 'sub-5' });
    expect(jwksFetches).toBe(3);
    // The JWKS the app holds now lacks the retired key: a token it signed, still within its exp, is refused.
    const refused = await app.verifyHandOff(stolen).catch((error: Error) => error);
    expect(refused).toMatchObject({ name: 'TokenRefused' });
    expect(String((refused as Error).message)).toMatch(/key/i);
  });
});
