import * as sdk from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ownPlanName, UsagePlanKeys } from '#lib/adapters/api-gateway/api-gateway-keys';

const apiGateway = mockClient(sdk.APIGatewayClient);
/** As the admin CLI builds it: the default plan given by id (USAGE_PLAN_ID). */
const throttling = new UsagePlanKeys(new sdk.APIGatewayClient({ region: 'eu-west-1' }), {
  id: 'plan-default',
});

const KEY_ID = 'key_0123456789abcdef01234567';
const USAGE_ID = `usage_${KEY_ID}`;
const API_KEY_ID = 'ak-1';
const STAGE = { apiId: 'api-1', stage: 'prod' };
const DEFAULT_PLAN: sdk.UsagePlan = {
  id: 'plan-default',
  name: 'embed-session-prod',
  apiStages: [{ ...STAGE, throttle: {} }],
  throttle: { rateLimit: 50, burstLimit: 100 },
};
const OWN_PLAN: sdk.UsagePlan = {
  id: 'plan-own',
  name: `embed-session-prod-${KEY_ID}`,
  apiStages: [STAGE],
  throttle: { rateLimit: 1, burstLimit: 2 },
};
const OTHER_STAGE_PLAN: sdk.UsagePlan = {
  id: 'plan-staging',
  name: 'x',
  apiStages: [{ apiId: 'api-2', stage: 's' }],
};

/** Every command sent, as `[name, input]`, in order. */
const sent = () => apiGateway.calls().map((call) => [call.args[0].constructor.name, call.args[0].input]);
/** Only the commands that change something. */
const writes = () => sent().filter(([name]) => !String(name).startsWith('Get'));

/** An account where the key's API key exists (or not), sits in `keyPlans`, and `allPlans` exist. */
function account({
  apiKey = true,
  keyPlans = [DEFAULT_PLAN],
  allPlans = [DEFAULT_PLAN],
}: {
  apiKey?: boolean;
  keyPlans?: sdk.UsagePlan[];
  allPlans?: sdk.UsagePlan[];
} = {}) {
  apiGateway.on(sdk.GetApiKeysCommand).resolves({
    items: apiKey ? [{ id: API_KEY_ID, name: USAGE_ID }] : [{ id: 'ak-x', name: `${USAGE_ID}9` }],
  });
  apiGateway.on(sdk.CreateApiKeyCommand).resolves({ id: API_KEY_ID });
  apiGateway.on(sdk.GetUsagePlanCommand).resolves(DEFAULT_PLAN);
  apiGateway.on(sdk.GetUsagePlansCommand).resolves({ items: allPlans });
  apiGateway.on(sdk.GetUsagePlansCommand, { keyId: API_KEY_ID }).resolves({ items: keyPlans });
  apiGateway.on(sdk.CreateUsagePlanCommand).resolves({ id: 'plan-own' });
}

beforeEach(() => {
  apiGateway.reset();
});

describe('UsagePlanKeys by plan id: register', () => {
  it('creates the API key (name and value: the usage identifier) and adds it to the default plan', async () => {
    account({ apiKey: false, keyPlans: [] });
    await throttling.register(KEY_ID);
    expect(sent()).toEqual([
      ['GetApiKeysCommand', { nameQuery: USAGE_ID, includeValues: false, limit: 500 }],
      [
        'CreateApiKeyCommand',
        {
          name: USAGE_ID,
          value: USAGE_ID,
          enabled: true,
          description: `Usage identifier of embed session API key ${KEY_ID} (not a credential)`,
        },
      ],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: API_KEY_ID, keyType: 'API_KEY' }],
    ]);
  });

  it('reuses an API key that already has exactly this name (a retried command), never a prefix match', async () => {
    account({ keyPlans: [] });
    await throttling.register(KEY_ID);
    expect(apiGateway.commandCalls(sdk.CreateApiKeyCommand)).toHaveLength(0);
    expect(apiGateway.commandCalls(sdk.CreateUsagePlanKeyCommand)[0]?.args[0].input.keyId).toBe(API_KEY_ID);
  });

  it('takes a key already in the plan (409) as registered, so running create-api-key’s registration again converges', async () => {
    account();
    apiGateway
      .on(sdk.CreateUsagePlanKeyCommand)
      .rejects(new sdk.ConflictException({ message: 'already in plan', $metadata: { httpStatusCode: 409 } }));
    await expect(throttling.register(KEY_ID)).resolves.toBeUndefined();
  });

  it('takes the API key another registration created meanwhile (409 on create) and puts that one in the plan', async () => {
    account({ apiKey: false, keyPlans: [] });
    apiGateway
      .on(sdk.GetApiKeysCommand)
      .resolvesOnce({ items: [] })
      .resolves({ items: [{ id: 'ak-7', name: USAGE_ID }] });
    apiGateway
      .on(sdk.CreateApiKeyCommand)
      .rejects(
        new sdk.ConflictException({ message: 'API Key already exists', $metadata: { httpStatusCode: 409 } }),
      );
    await throttling.register(KEY_ID);
    expect(apiGateway.commandCalls(sdk.CreateUsagePlanKeyCommand)[0]?.args[0].input.keyId).toBe('ak-7');
  });
});

describe('UsagePlanKeys by plan id: apply: limits of its own', () => {
  it('creates the key’s own plan on the default plan’s stage and moves the key there from the default plan', async () => {
    account();
    await throttling.apply(KEY_ID, { rate: 5, burst: 10 });
    expect(sent()).toEqual([
      ['GetApiKeysCommand', { nameQuery: USAGE_ID, includeValues: false, limit: 500 }],
      ['GetUsagePlanCommand', { usagePlanId: 'plan-default' }],
      ['GetUsagePlansCommand', { limit: 500, position: undefined }],
      [
        'CreateUsagePlanCommand',
        {
          name: `embed-session-prod-${KEY_ID}`,
          description: `Own rate limit of embed session API key ${KEY_ID}`,
          apiStages: [STAGE],
          throttle: { rateLimit: 5, burstLimit: 10 },
        },
      ],
      ['GetUsagePlansCommand', { limit: 500, position: undefined, keyId: API_KEY_ID }],
      ['DeleteUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: API_KEY_ID }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-own', keyId: API_KEY_ID, keyType: 'API_KEY' }],
    ]);
  });

  it('updates the throttle of the plan the key already has, and moves nothing', async () => {
    account({ keyPlans: [OWN_PLAN], allPlans: [DEFAULT_PLAN, OWN_PLAN] });
    await throttling.apply(KEY_ID, { rate: 7, burst: 3 });
    expect(writes()).toEqual([
      [
        'UpdateUsagePlanCommand',
        {
          usagePlanId: 'plan-own',
          patchOperations: [
            { op: 'replace', path: '/throttle/rateLimit', value: '7' },
            { op: 'replace', path: '/throttle/burstLimit', value: '3' },
          ],
        },
      ],
    ]);
  });

  it('finds its own plan on a later page of usage plans', async () => {
    account({ keyPlans: [DEFAULT_PLAN] });
    apiGateway
      .on(sdk.GetUsagePlansCommand, { position: undefined, keyId: undefined })
      .resolves({ items: [DEFAULT_PLAN], position: 'page-2' })
      .on(sdk.GetUsagePlansCommand, { position: 'page-2' })
      .resolves({ items: [OWN_PLAN] });
    await throttling.apply(KEY_ID, { rate: 7, burst: 3 });
    expect(apiGateway.commandCalls(sdk.CreateUsagePlanCommand)).toHaveLength(0);
    expect(writes().map(([name]) => name)).toEqual([
      'UpdateUsagePlanCommand',
      'DeleteUsagePlanKeyCommand',
      'CreateUsagePlanKeyCommand',
    ]);
  });

  it('creates the API key first when the key has none yet (a stack deployed before keys were throttled)', async () => {
    account({ apiKey: false, keyPlans: [] });
    await throttling.apply(KEY_ID, { rate: 5, burst: 10 });
    expect(writes().map(([name]) => name)).toEqual([
      'CreateApiKeyCommand',
      'CreateUsagePlanCommand',
      'CreateUsagePlanKeyCommand',
    ]);
  });

  it('leaves the key in plans of other APIs or stages alone', async () => {
    account({ keyPlans: [DEFAULT_PLAN, OTHER_STAGE_PLAN] });
    await throttling.apply(KEY_ID, { rate: 5, burst: 10 });
    expect(
      apiGateway.commandCalls(sdk.DeleteUsagePlanKeyCommand).map((c) => c.args[0].input.usagePlanId),
    ).toEqual(['plan-default']);
  });
});

/** The writes that retire a key's own plan: detached from the stage, then deleted. */
const DELETES_OWN_PLAN = [
  [
    'UpdateUsagePlanCommand',
    { usagePlanId: 'plan-own', patchOperations: [{ op: 'remove', path: '/apiStages', value: 'api-1:prod' }] },
  ],
  ['DeleteUsagePlanCommand', { usagePlanId: 'plan-own' }],
];

describe('UsagePlanKeys by plan id: apply: back to the defaults', () => {
  it('moves the key back to the default plan, then detaches and deletes its own plan', async () => {
    account({ keyPlans: [OWN_PLAN], allPlans: [DEFAULT_PLAN, OWN_PLAN] });
    await throttling.apply(KEY_ID, null);
    expect(writes()).toEqual([
      ['DeleteUsagePlanKeyCommand', { usagePlanId: 'plan-own', keyId: API_KEY_ID }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: API_KEY_ID, keyType: 'API_KEY' }],
      ...DELETES_OWN_PLAN,
    ]);
  });

  it('changes nothing when the key is in the default plan already', async () => {
    account();
    await throttling.apply(KEY_ID, null);
    expect(writes()).toEqual([]);
  });

  it('puts a key that is in no plan into the default plan', async () => {
    account({ keyPlans: [] });
    await throttling.apply(KEY_ID, null);
    expect(writes()).toEqual([
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: API_KEY_ID, keyType: 'API_KEY' }],
    ]);
  });
});

describe('UsagePlanKeys by plan id: remove', () => {
  it('deletes the API key and the key’s own plan', async () => {
    account({ keyPlans: [OWN_PLAN], allPlans: [DEFAULT_PLAN, OWN_PLAN] });
    await throttling.remove(KEY_ID);
    expect(writes()).toEqual([['DeleteApiKeyCommand', { apiKey: API_KEY_ID }], ...DELETES_OWN_PLAN]);
  });

  it('deletes only the API key of a key under the defaults, and nothing when it is gone already', async () => {
    account();
    await throttling.remove(KEY_ID);
    expect(writes()).toEqual([['DeleteApiKeyCommand', { apiKey: API_KEY_ID }]]);
    apiGateway.reset();
    account({ apiKey: false });
    await throttling.remove(KEY_ID);
    expect(writes()).toEqual([]);
  });

  it('never touches the default plan', async () => {
    account({ keyPlans: [DEFAULT_PLAN] });
    await throttling.remove(KEY_ID);
    expect(apiGateway.commandCalls(sdk.DeleteUsagePlanCommand)).toHaveLength(0);
    expect(apiGateway.commandCalls(sdk.UpdateUsagePlanCommand)).toHaveLength(0);
    expect(apiGateway.commandCalls(sdk.DeleteApiKeyCommand)).toHaveLength(1);
  });
});

describe('ownPlanName', () => {
  it('is the default plan’s name and the key id, so each stage’s plans stay apart', () => {
    expect(ownPlanName('embed-session-prod', KEY_ID)).toBe(`embed-session-prod-${KEY_ID}`);
    expect(ownPlanName('embed-session-staging', KEY_ID)).not.toBe(ownPlanName('embed-session-prod', KEY_ID));
  });
});
