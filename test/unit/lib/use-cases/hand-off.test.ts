import { describe, expect, it } from 'vitest';
import type { Board } from '#lib/domain/board';
import { ID_TOKEN_CLAIMS, type IdTokenClaims } from '#lib/domain/id-token';
import type { IdTokenSigner, PairwiseSubjects } from '#lib/domain/ports';
import { boardAppUrlOf, handOff } from '#lib/use-cases/hand-off';
import type { EmbedView } from '#lib/use-cases/open-embed-session';
import { fixedClock, PUBLIC_BOARD, sequenceRandom, VISIBLE_SUBJECTS } from '#test/support/fakes';
import { ADA_PROFILE } from '#test/support/fixtures';

const NOW = '2026-03-01T12:00:00.000Z';
const NOW_S = Date.parse(NOW) / 1000;
const APP = 'https://board.acme.com/embedded?x=1';

/** Records what it signs and answers the claims as JSON, so the test sees exactly what went in. */
function recordingSigner(): IdTokenSigner & { signed: IdTokenClaims[] } {
  const signer = {
    signed: [] as IdTokenClaims[],
    sign: async (claims: IdTokenClaims) => {
      signer.signed.push(claims);
      return `signed:${JSON.stringify(claims)}`;
    },
  };
  return signer;
}
const subjects: PairwiseSubjects = VISIBLE_SUBJECTS;

const view = (expiresAt = '2026-03-31T12:00:00.000Z'): EmbedView => ({
  board: { ...PUBLIC_BOARD, name: 'Roadmap' },
  session: {
    id: 'ses_1',
    boardId: PUBLIC_BOARD.boardId,
    orgId: 'org-a',
    tenant: { kind: 'organization', id: 'org-a' },
    ...ADA_PROFILE,
    metadata: { team: 'core' },
    createdAt: '2026-03-01T11:00:00.000Z',
    expiresAt,
    createdByUserId: 'user_demo',
    createdByKeyId: 'key_1',
    revokedAt: null,
    revokedByUserId: null,
    revokedByKeyId: null,
    bindToBrowser: false,
    boundAt: null,
  },
});

function deps() {
  return { signer: recordingSigner(), subjects, clock: fixedClock(NOW), random: sequenceRandom() };
}

describe('handOff', () => {
  it('signs exactly the documented claims, for the app’s origin, from the session and its board', async () => {
    const d = deps();
    const result = await handOff(d, view(), { issuer: 'https://embed.example.com', appUrl: APP });
    expect(result.url).toBe(APP);
    expect(result.idToken).toBe(`signed:${JSON.stringify(d.signer.signed[0])}`);
    const claims = d.signer.signed[0];
    expect(Object.keys(claims ?? {})).toEqual(ID_TOKEN_CLAIMS);
    expect(claims).toEqual({
      iss: 'https://embed.example.com',
      aud: 'https://board.acme.com',
      sub: 'sub(organization:org-a,customer-42)',
      tid: 'tid(organization:org-a)',
      user_id: 'customer-42',
      email: 'ada@example.com',
      given_name: 'Ada',
      family_name: 'Lovelace',
      picture: 'https://cdn.example.com/ada.png',
      plan: 'pro',
      metadata: { team: 'core' },
      board_id: PUBLIC_BOARD.boardId,
      board_name: 'Roadmap',
      sid: 'ses_1',
      iat: NOW_S,
      exp: NOW_S + 300,
      session_exp: Date.parse('2026-03-31T12:00:00.000Z') / 1000,
      jti: '00000000-0000-4000-8000-000000000001',
    });
  });

  it('never lets the token outlive its session', async () => {
    const d = deps();
    await handOff(d, view('2026-03-01T12:01:30.500Z'), { issuer: 'https://e.example.com', appUrl: APP });
    expect(d.signer.signed[0]?.exp).toBe(NOW_S + 90);
  });

  it('carries the session’s own expiry beside exp, in whole seconds never past it', async () => {
    const d = deps();
    await handOff(d, view('2026-03-01T14:00:00.900Z'), { issuer: 'https://e.example.com', appUrl: APP });
    expect(d.signer.signed[0]?.session_exp).toBe(NOW_S + 2 * 3600);
    expect(d.signer.signed[0]?.exp).toBe(NOW_S + 300);
  });

  it('makes session_exp − iat the time the session has left, rounded down, so an app counting it never outlives it', async () => {
    // Signed at 12:00:00.600 for a session ending at 12:01:30.500: 89.9 s left, and iat is 12:00:00.
    const d = { ...deps(), clock: fixedClock('2026-03-01T12:00:00.600Z') };
    await handOff(d, view('2026-03-01T12:01:30.500Z'), { issuer: 'https://e.example.com', appUrl: APP });
    const claims = d.signer.signed[0] as IdTokenClaims;
    expect(claims.iat).toBe(NOW_S);
    expect(claims.session_exp - claims.iat).toBe(89);
    // Never past the session's own expiry, though its floor (12:01:30) would give 90 s.
    expect(claims.session_exp).toBeLessThanOrEqual(Date.parse('2026-03-01T12:01:30.500Z') / 1000);
    expect(claims.exp).toBe(NOW_S + 90);
  });

  it('gives every token its own jti', async () => {
    const d = deps();
    for (let i = 0; i < 3; i++) await handOff(d, view(), { issuer: 'https://e.example.com', appUrl: APP });
    expect(new Set(d.signer.signed.map((claims) => claims.jti)).size).toBe(3);
  });
});

describe('boardAppUrlOf', () => {
  const remote = { allowLoopbackHttp: false };
  const board = (appUrl?: string): Board => ({ ...PUBLIC_BOARD, ...(appUrl ? { appUrl } : {}) });

  it('prefers the board’s own app URL over the stage default', () => {
    expect(boardAppUrlOf(board(APP), 'https://default.example.com', remote)).toBe(APP);
  });

  it('falls back to the stage default, and to none (the built-in page) without either', () => {
    expect(boardAppUrlOf(board(), 'https://default.example.com', remote)).toBe('https://default.example.com');
    expect(boardAppUrlOf(board(), undefined, remote)).toBeUndefined();
  });

  it('ignores an app URL the rule forbids, so no token goes there', () => {
    expect(boardAppUrlOf(board('http://127.0.0.1:3001/'), undefined, remote)).toBeUndefined();
    expect(boardAppUrlOf(board('http://127.0.0.1:3001/'), undefined, { allowLoopbackHttp: true })).toBe(
      'http://127.0.0.1:3001/',
    );
  });
});
