/**
 * The webhook endpoint use cases with in-memory ports: a create checks its URL against the destination
 * policy before anything is stored and asks the repository to hold the per-owner bound; the listing is
 * paged oldest first with a cursor signed for the caller.
 */
import { describe, expect, it } from 'vitest';
import { PUBLIC_DESTINATIONS } from '#lib/domain/destinations';
import { ValidationError, WebhookLimitReachedError, WebhookNotFoundError } from '#lib/domain/errors';
import type { WebhookRepository } from '#lib/domain/ports';
import { MAX_WEBHOOK_ENDPOINTS_PER_OWNER, type WebhookEndpoint } from '#lib/domain/webhook';
import { createWebhook, listWebhooks, rotateWebhookSecret } from '#lib/use-cases/webhooks';
import { fixedClock, sequenceRandom } from '#test/support/fakes';

class MemoryWebhooks implements WebhookRepository {
  readonly items: WebhookEndpoint[] = [];
  readonly limits: number[] = [];
  async create(endpoint: WebhookEndpoint, limits: { maxPerOwner: number }) {
    this.limits.push(limits.maxPerOwner);
    if (this.items.filter((e) => e.ownerUserId === endpoint.ownerUserId).length >= limits.maxPerOwner)
      throw new WebhookLimitReachedError(limits.maxPerOwner);
    this.items.push(endpoint);
    return endpoint;
  }
  async get(owner: string, id: string) {
    return this.items.find((e) => e.ownerUserId === owner && e.id === id);
  }
  async list(owner: string) {
    return this.items
      .filter((e) => e.ownerUserId === owner)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }
  async delete() {
    return false;
  }
  /** The next rotation lands, but its answer is lost: the repository reports what a re-read finds. */
  loseNextAnswer = false;
  /** Another rotation lands just before the next one. */
  rotateBeforeNext = false;
  async rotateSecret(
    owner: string,
    id: string,
    rotation: { from: number; previousUntil: string; rotationId: string },
  ): Promise<WebhookEndpoint | 'conflict' | undefined> {
    const index = this.items.findIndex((e) => e.ownerUserId === owner && e.id === id);
    const found = this.items[index];
    if (!found) return undefined;
    if (this.rotateBeforeNext) {
      this.rotateBeforeNext = false;
      this.items[index] = {
        ...found,
        secretVersion: (found.secretVersion ?? 1) + 1,
        secretRotationId: 'other',
      };
      return 'conflict';
    }
    if ((found.secretVersion ?? 1) !== rotation.from)
      return found.secretRotationId === rotation.rotationId ? found : 'conflict';
    const rotated: WebhookEndpoint = {
      ...found,
      secretVersion: rotation.from + 1,
      previousSecret: { version: rotation.from, until: rotation.previousUntil },
      secretRotationId: rotation.rotationId,
    };
    this.items[index] = rotated;
    if (this.loseNextAnswer) {
      this.loseNextAnswer = false;
      // The SDK's retry of the landed write is refused by its condition; the re-read names this rotation.
      return this.rotateSecret(owner, id, rotation);
    }
    return rotated;
  }
}

const OWNER = { userId: 'owner-a', keyId: 'key_a' };
const CALLER = { ...OWNER, apiKey: 'esk_test_owner_a_key' };

function deps() {
  return {
    webhooks: new MemoryWebhooks(),
    secrets: { secretOf: async (id: string) => `whsec_${Buffer.from(id).toString('base64')}` },
    clock: fixedClock('2026-03-01T12:00:00.000Z'),
    random: sequenceRandom(),
  };
}

const endpoint = (n: number, owner = OWNER.userId): WebhookEndpoint => ({
  id: `whe_${String(n).padStart(32, '0')}`,
  ownerUserId: owner,
  url: `https://hooks.example.com/${n}`,
  events: ['session.created'],
  description: null,
  createdAt: `2026-03-01T12:00:${String(n).padStart(2, '0')}.000Z`,
  createdByKeyId: 'key_a',
});

describe('createWebhook', () => {
  it('asks the repository to hold the owner to 16 endpoints, and passes its refusal on', async () => {
    const d = deps();
    for (let n = 0; n < MAX_WEBHOOK_ENDPOINTS_PER_OWNER; n++)
      await createWebhook(d, {
        keyOwner: OWNER,
        request: { url: `https://hooks.example.com/${n}` },
        destinations: PUBLIC_DESTINATIONS,
      });
    await expect(
      createWebhook(d, {
        keyOwner: OWNER,
        request: { url: 'https://hooks.example.com/17' },
        destinations: PUBLIC_DESTINATIONS,
      }),
    ).rejects.toBeInstanceOf(WebhookLimitReachedError);
    expect(new Set(d.webhooks.limits)).toEqual(new Set([16]));
  });

  it('refuses a URL inside the network before storing anything or deriving a secret', async () => {
    const d = deps();
    await expect(
      createWebhook(d, {
        keyOwner: OWNER,
        request: { url: 'https://169.254.169.254/latest/meta-data/' },
        destinations: PUBLIC_DESTINATIONS,
      }),
    ).rejects.toThrow(
      new ValidationError('url must point to the public internet: 169.254.169.254 is a link-local address'),
    );
    expect(d.webhooks.items).toEqual([]);
  });
});

describe('listWebhooks', () => {
  it('answers one page, oldest first, with a cursor to the next, and null on the last', async () => {
    const d = deps();
    d.webhooks.items.push(endpoint(3), endpoint(1), endpoint(2), endpoint(9, 'someone-else'));
    const first = await listWebhooks(d, CALLER, { limit: 2 });
    expect(first.data.map((w) => w.id)).toEqual([endpoint(1).id, endpoint(2).id]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await listWebhooks(d, CALLER, { limit: 2, cursor: first.nextCursor as string });
    expect(second).toEqual({ data: [expect.objectContaining({ id: endpoint(3).id })], nextCursor: null });
    const whole = await listWebhooks(d, CALLER, { limit: 20 });
    expect(whole.nextCursor).toBeNull();
    expect(whole.data).toHaveLength(3);
  });

  it('answers no secret and nothing of another owner', async () => {
    const d = deps();
    d.webhooks.items.push(endpoint(1), endpoint(2, 'someone-else'));
    const page = await listWebhooks(d, CALLER, { limit: 20 });
    expect(page.data).toEqual([
      {
        id: endpoint(1).id,
        url: endpoint(1).url,
        events: ['session.created'],
        description: null,
        createdAt: endpoint(1).createdAt,
      },
    ]);
  });

  it('refuses a cursor issued to another caller: 400, never another owner’s page', async () => {
    const d = deps();
    d.webhooks.items.push(endpoint(1), endpoint(2));
    const { nextCursor } = await listWebhooks(d, CALLER, { limit: 1 });
    const other = { userId: 'owner-b', keyId: 'key_b', apiKey: 'esk_test_owner_b_key' };
    await expect(listWebhooks(d, other, { limit: 1, cursor: nextCursor as string })).rejects.toThrow(
      'cursor is invalid or was issued for another query',
    );
  });
});

describe('rotateWebhookSecret', () => {
  const NOW = '2026-03-01T12:00:00.000Z';
  /** Endpoint 1 of the owner, stored; secrets that name their endpoint and version. */
  function rotating() {
    const d = {
      ...deps(),
      secrets: { secretOf: async (id: string, version = 1) => `whsec_${id}_v${version}` },
    };
    d.webhooks.items.push(endpoint(1));
    return d;
  }
  const ID = endpoint(1).id;

  it('answers the new secret once, and the replaced one signs a day more unless asked otherwise', async () => {
    const d = rotating();
    const rotated = await rotateWebhookSecret(d, OWNER, ID);
    expect(rotated).toEqual({
      webhook: expect.objectContaining({ id: ID }),
      secret: `whsec_${ID}_v2`,
      previousSecretExpiresAt: '2026-03-02T12:00:00.000Z',
    });
    expect(rotated.webhook).not.toHaveProperty('secretVersion');
    expect(await d.webhooks.get(OWNER.userId, ID)).toMatchObject({
      secretVersion: 2,
      previousSecret: { version: 1, until: '2026-03-02T12:00:00.000Z' },
    });
  });

  it('moves on from the current version each time, and stores no secret', async () => {
    const d = rotating();
    await rotateWebhookSecret(d, OWNER, ID, { overlapSeconds: 60 });
    const second = await rotateWebhookSecret(d, OWNER, ID, { overlapSeconds: 0 });
    expect(second.secret).toBe(`whsec_${ID}_v3`);
    expect(second.previousSecretExpiresAt).toBe(NOW);
    expect(JSON.stringify(d.webhooks.items)).not.toContain('whsec_');
  });

  it('recognises its own write when the answer was lost, and rotates once', async () => {
    const d = rotating();
    d.webhooks.loseNextAnswer = true;
    const rotated = await rotateWebhookSecret(d, OWNER, ID);
    expect(rotated.secret).toBe(`whsec_${ID}_v2`);
    expect((await d.webhooks.get(OWNER.userId, ID))?.secretVersion).toBe(2);
  });

  it('rotates from where another rotation left it when one landed in between', async () => {
    const d = rotating();
    d.webhooks.rotateBeforeNext = true;
    const rotated = await rotateWebhookSecret(d, OWNER, ID);
    expect(rotated.secret).toBe(`whsec_${ID}_v3`);
  });

  it.each([-1, 1.5, 604_801])(
    'refuses an overlap of %s seconds before reading anything',
    async (overlapSeconds) => {
      const d = rotating();
      await expect(rotateWebhookSecret(d, OWNER, ID, { overlapSeconds })).rejects.toThrow(
        /overlapSeconds must be a whole number of seconds from 0 to 604800/,
      );
      expect((await d.webhooks.get(OWNER.userId, ID))?.secretVersion).toBeUndefined();
    },
  );

  it('answers another owner’s endpoint, a malformed id and a missing one as not found', async () => {
    const d = rotating();
    for (const [owner, id] of [
      [{ userId: 'owner-b', keyId: 'key_b' }, ID],
      [OWNER, 'whe_nope'],
      [OWNER, endpoint(2).id],
    ] as const)
      await expect(rotateWebhookSecret(d, owner, id)).rejects.toBeInstanceOf(WebhookNotFoundError);
    expect((await d.webhooks.get(OWNER.userId, ID))?.secretVersion).toBeUndefined();
  });
});

describe('rotateWebhookSecret retried with its Idempotency-Key', () => {
  it('answers the rotation it made, rather than rotating again, when its first answer was a 503', async () => {
    const d = {
      ...deps(),
      secrets: { secretOf: async (id: string, version = 1) => `whsec_${id}_v${version}` },
    };
    d.webhooks.items.push(endpoint(1));
    const id = endpoint(1).id;
    const first = await rotateWebhookSecret(d, OWNER, id, { rotationId: 'claimed-once' });
    const retry = await rotateWebhookSecret(d, OWNER, id, { rotationId: 'claimed-once' });
    expect(retry).toEqual(first);
    expect((await d.webhooks.get(OWNER.userId, id))?.secretVersion).toBe(2);
  });
});
