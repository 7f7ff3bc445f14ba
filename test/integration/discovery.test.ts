import { createRemoteJWKSet, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ID_TOKEN_CLAIMS } from '#lib/domain/id-token';
import { call, createSessionCall } from '#test/support/local-runtime';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';

const runtime = useTestRuntime();
beforeAll(async () => {
  await putPublicBoard(runtime, 'board_discovery_app', 'org_demo', {
    name: 'Discovery',
    appUrl: 'https://app.discovery.test/board',
  });
});

function expectPublicAndCacheable(headers: Headers) {
  expect(headers.get('content-type')).toBe('application/json');
  expect(headers.get('cache-control')).toBe('public, max-age=300');
  expect(headers.get('access-control-allow-origin')).toBe('*');
}

describe('GET /.well-known/openid-configuration', () => {
  it('names the issuer, the JWKS, ES256, pairwise subjects, the claims and back-channel logout, publicly and cacheably', async () => {
    const result = await call(runtime, '/.well-known/openid-configuration');
    expect(result.status).toBe(200);
    expectPublicAndCacheable(result.headers);
    expect(result.body).toEqual({
      issuer: runtime.baseUrl,
      jwks_uri: `${runtime.baseUrl}/.well-known/jwks.json`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['ES256'],
      claims_supported: ID_TOKEN_CLAIMS,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
    });
  });
});

describe('GET /.well-known/jwks.json', () => {
  it('publishes the P-256 public key, without its private part, publicly and cacheably', async () => {
    const result = await call(runtime, '/.well-known/jwks.json');
    expect(result.status).toBe(200);
    expectPublicAndCacheable(result.headers);
    const keys = result.body.keys as Record<string, unknown>[];
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0] ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  });

  it('verifies a handed-off token with nothing but the issuer: discovery, then the JWKS', async () => {
    const created = await createSessionCall(runtime, {
      boardId: 'board_discovery_app',
      userId: 'customer-1',
      email: 'c@example.com',
    });
    const embed = await call(
      runtime,
      `/embed?token=${(created.body as { sessionToken: string }).sessionToken}`,
      {
        headers: { Accept: 'application/json' },
      },
    );
    const { idToken } = embed.body.handoff as { idToken: string };
    const discovery = (await (await fetch(`${runtime.baseUrl}/.well-known/openid-configuration`)).json()) as {
      issuer: string;
      jwks_uri: string;
    };
    const { payload } = await jwtVerify(idToken, createRemoteJWKSet(new URL(discovery.jwks_uri)), {
      issuer: discovery.issuer,
      audience: 'https://app.discovery.test',
      algorithms: ['ES256'],
    });
    expect(payload.user_id).toBe('customer-1');
  });
});

describe('GET /embed-board.js', () => {
  it('serves the board application script, readable from any origin', async () => {
    const result = await call(runtime, '/embed-board.js');
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(result.headers.get('access-control-allow-origin')).toBe('*');
    expect(result.text).toContain('EmbedBoard');
  });
});
