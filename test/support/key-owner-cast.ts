import { beforeAll } from 'vitest';
import type { LocalRuntime } from '#local/runtime';
import type { DemoData } from '#local/seed';
import { type KeyOwnerFixture, keyOwner } from './local-runtime';

/**
 * The key owners that tests of who may see and revoke sessions act as, beside the seeded demo tenant.
 * Read its members in the tests: they are there once the file's `beforeAll` has issued the keys.
 */
export interface KeyOwnerCast {
  /** The seeded demo data: its boards, its user and its key. */
  demo: DemoData;
  /** The demo key owner: a member of org_demo (the public and private demo boards). */
  owner: KeyOwnerFixture;
  /** Another key owner in org_demo. */
  colleague: KeyOwnerFixture;
  /** A key owner in no organization, who creates sessions on the public demo board. */
  outsider: KeyOwnerFixture;
  /** A second key of the outsider. */
  outsiderSecondKey: KeyOwnerFixture;
  /** A tenant of another organization (org_other), using the same external user ids as the demo tenant. */
  otherTenant: KeyOwnerFixture;
}

/**
 * Issues the cast's keys on the file's runtime before its tests (after the runtime has started); the
 * user ids of the new key owners start with `prefix`. Each member is a record of its own, filled in then,
 * so a file may take the members apart at the top.
 */
export function useKeyOwnerCast(runtime: LocalRuntime, prefix = ''): KeyOwnerCast {
  const cast: KeyOwnerCast = {
    demo: {} as DemoData,
    owner: {} as KeyOwnerFixture,
    colleague: {} as KeyOwnerFixture,
    outsider: {} as KeyOwnerFixture,
    outsiderSecondKey: {} as KeyOwnerFixture,
    otherTenant: {} as KeyOwnerFixture,
  };
  beforeAll(async () => {
    const demo = runtime.demo;
    if (!demo) throw new Error('the key owner cast needs a runtime seeded with the demo data');
    Object.assign(cast.demo, demo);
    Object.assign(cast.owner, { userId: demo.userId, keyId: demo.keyId, apiKey: demo.apiKey });
    Object.assign(cast.colleague, await keyOwner(runtime, `${prefix}colleague`, ['org_demo']));
    Object.assign(cast.outsider, await keyOwner(runtime, `${prefix}outsider`));
    Object.assign(cast.outsiderSecondKey, await keyOwner(runtime, `${prefix}outsider`));
    Object.assign(cast.otherTenant, await keyOwner(runtime, `${prefix}other-tenant`, ['org_other']));
  });
  return cast;
}
