import type { LocalRuntime } from '#local/runtime';
import type { DemoData } from '#local/seed';
import { lateBound, useForTests } from './late-bound';
import { type KeyOwnerFixture, keyOwner } from './local-runtime';

/**
 * The key owners that tests of who may see and revoke sessions act as, beside the seeded demo tenant.
 * Each stands for its key owner once the file's `beforeAll` has issued the keys.
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
 * user ids of the new key owners start with `prefix`.
 */
export function useKeyOwnerCast(runtime: LocalRuntime, prefix = ''): KeyOwnerCast {
  const cast = useForTests('the key owner cast', async (): Promise<KeyOwnerCast> => {
    const demo = runtime.demo;
    if (!demo) throw new Error('the key owner cast needs a runtime seeded with the demo data');
    return {
      demo,
      owner: { userId: demo.userId, keyId: demo.keyId, apiKey: demo.apiKey },
      colleague: await keyOwner(runtime, `${prefix}colleague`, ['org_demo']),
      outsider: await keyOwner(runtime, `${prefix}outsider`),
      outsiderSecondKey: await keyOwner(runtime, `${prefix}outsider`),
      otherTenant: await keyOwner(runtime, `${prefix}other-tenant`, ['org_other']),
    };
  });
  const member = <K extends keyof KeyOwnerCast>(name: K) => lateBound(() => cast[name]);
  return {
    demo: member('demo'),
    owner: member('owner'),
    colleague: member('colleague'),
    outsider: member('outsider'),
    outsiderSecondKey: member('outsiderSecondKey'),
    otherTenant: member('otherTenant'),
  };
}
