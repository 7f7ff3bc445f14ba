/**
 * The webhook endpoint use cases with in-memory ports: a create checks its URL against the destination
 * policy before anything is stored and asks the repository to hold the per-owner bound; the listing is
 * paged oldest first with a cursor signed for the caller.
 */
import { describe, expect, it } from 'vitest';
import { PUBLIC_DESTINATIONS } from '#lib/domain/destinations';
import { ValidationError, WebhookLimitReachedError } from '#lib/domain/errors';
import type { WebhookRepository } from '#lib/domain/ports';
import { MAX_WEBHOOK_ENDPOINTS_PER_OWNER, type WebhookEndpoint } from '#lib/domain/webhook';
import { createWebhook, listWebhooks } from '#lib/use-cases/webhooks';
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
