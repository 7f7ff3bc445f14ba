import { createHmac } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IdTokenClaims } from '#lib/domain/id-token';
import type { Tenant } from '#lib/domain/tenant';
import { ensureLocalKeyFile, LocalIdTokenKeys } from '#lib/signing/local-keys';

const ORG_A: Tenant = { kind: 'organization', id: 'org_a' };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'id-token-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const now = Math.floor(Date.now() / 1000);
const claims = (overrides: Partial<IdTokenClaims> = {}): IdTokenClaims => ({
  iss: 'http://127.0.0.1:3000',
  aud: 'http://127.0.0.1:3001',
  sub: 'subject',
  tid: 'tenant',
  user_id: 'customer-42',
  email: 'ada@example.com',
  given_name: 'Ada',
  family_name: 'Lovelace',
  picture: null,
  plan: 'pro',
  metadata: { team: 'core' },
  board_id: 'board_public_demo',
  board_name: 'Product roadmap',
  sid: 'ses_1',
  iat: now,
  exp: now + 300,
  session_exp: now + 3600,
  jti: 'jti-1',
  ...overrides,
});

describe('ensureLocalKeyFile', () => {
  it('creates the key file readable by its owner only, and keeps an existing one', async () => {
    const path = join(dir, 'nested', 'keys.json');
    await ensureLocalKeyFile(path);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const first = await readFile(path, 'utf8');
    await ensureLocalKeyFile(path);
    expect(await readFile(path, 'utf8')).toBe(first);
  });

  it('narrows an existing key file that others could read to 0600', async () => {
    const path = join(dir, 'keys.json');
    await ensureLocalKeyFile(path);
    await chmod(path, 0o644);
    await ensureLocalKeyFile(path);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});

describe('LocalIdTokenKeys', () => {
  async function keys() {
    const path = join(dir, 'keys.json');
    await ensureLocalKeyFile(path);
    return new LocalIdTokenKeys(path);
  }

  it('signs an ES256 JWT with a kid that a standard library verifies against the published keys', async () => {
    const signer = await keys();
    const token = await signer.sign(claims());
    const [published] = await signer.publicKeys();
    expect(published).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', typ: 'JWT', kid: published?.kid });
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: await signer.publicKeys() }), {
      issuer: 'http://127.0.0.1:3000',
      audience: 'http://127.0.0.1:3001',
      algorithms: ['ES256'],
    });
    expect(payload).toEqual(claims());
  });

  it('publishes no private part of the key', async () => {
    const [published] = await (await keys()).publicKeys();
    expect(Object.keys(published ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
  });

  it('keeps signing with the same key across restarts that share the key file', async () => {
    const first = await keys();
    const second = await keys();
    expect(await second.publicKeys()).toEqual(await first.publicKeys());
    await expect(
      jwtVerify(await second.sign(claims()), createLocalJWKSet({ keys: await first.publicKeys() })),
    ).resolves.toBeDefined();
  });

  it('refuses a token whose claims were changed after signing', async () => {
    const signer = await keys();
    const [header, , signature] = (await signer.sign(claims())).split('.');
    const forged = Buffer.from(JSON.stringify(claims({ user_id: 'someone-else' }))).toString('base64url');
    await expect(
      jwtVerify(`${header}.${forged}.${signature}`, createLocalJWKSet({ keys: await signer.publicKeys() })),
    ).rejects.toThrow(/signature/i);
  });

  it('derives a pairwise subject: stable per tenant and user, different across tenants, revealing neither', async () => {
    const signer = await keys();
    const subject = await signer.subjectOf(ORG_A, 'customer-42');
    expect(await signer.subjectOf(ORG_A, 'customer-42')).toBe(subject);
    expect(await signer.subjectOf({ kind: 'organization', id: 'org_b' }, 'customer-42')).not.toBe(subject);
    expect(await signer.subjectOf(ORG_A, 'customer-43')).not.toBe(subject);
    expect(subject).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(subject).not.toContain('customer');
    expect(subject).not.toContain('org_a');
  });

  it('keeps an organization’s subjects as they were: the HMAC of subjectMessage(orgId, userId)', async () => {
    const signer = await keys();
    const { subjectSecret } = JSON.parse(await readFile(join(dir, 'keys.json'), 'utf8')) as {
      subjectSecret: string;
    };
    const before = createHmac('sha256', Buffer.from(subjectSecret, 'base64url'))
      .update('["pairwise-sub","org_a","customer-42"]')
      .digest('base64url');
    expect(await signer.subjectOf(ORG_A, 'customer-42')).toBe(before);
  });

  it('gives a key owner tenant subjects of its own, even under an id equal to an organization’s', async () => {
    const signer = await keys();
    const asOwner = await signer.subjectOf({ kind: 'keyOwner', id: 'org_a' }, 'customer-42');
    expect(asOwner).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(asOwner).not.toBe(await signer.subjectOf(ORG_A, 'customer-42'));
  });

  it('derives the tenant id: stable, per tenant and kind, revealing no raw id, and never a subject', async () => {
    const signer = await keys();
    const tid = await signer.tenantIdOf(ORG_A);
    expect(await signer.tenantIdOf(ORG_A)).toBe(tid);
    expect(tid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tid).not.toContain('org_a');
    expect(await signer.tenantIdOf({ kind: 'keyOwner', id: 'org_a' })).not.toBe(tid);
    expect(await signer.tenantIdOf({ kind: 'organization', id: 'org_b' })).not.toBe(tid);
    expect(await signer.subjectOf(ORG_A, '')).not.toBe(tid);
  });

  it('gives another key file (another stage) other subjects for the same tenant and user', async () => {
    const other = join(dir, 'other.json');
    await ensureLocalKeyFile(other);
    expect(await new LocalIdTokenKeys(other).subjectOf(ORG_A, 'u')).not.toBe(
      await (await keys()).subjectOf(ORG_A, 'u'),
    );
  });
});
