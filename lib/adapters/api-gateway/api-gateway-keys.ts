/**
 * API Gateway's API keys and usage plans, the one adapter behind both the provisioning API (and the
 * authorizer) and the admin CLI. Each API key of ours has an API Gateway API key whose name and value are
 * its usage identifier (the authorizer returns it as `usageIdentifierKey`); API Gateway refuses a key in no
 * usage plan of the stage. The key sits in the stage's default usage plan, or, when it has limits of its
 * own (set with the admin CLI), in a usage plan of its own on the same stage: API Gateway lets a key be in
 * one usage plan per stage, and throttles per plan. Every call goes through the client its caller built
 * under the one call policy (lib/platform/aws-clients.ts).
 */
import {
  type APIGatewayClient,
  type ApiStage,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlansCommand,
  UpdateUsagePlanCommand,
  type UsagePlan,
} from '@aws-sdk/client-api-gateway';
import { type RateLimit, usageIdentifierOf } from '#lib/domain/api-key';
import { DependencyUnavailableError } from '#lib/domain/errors';
import type { KeyThrottling } from '#lib/domain/ports';
import { isTransientAwsError } from '#lib/platform/aws-clients';

/** The most items API Gateway returns per page. */
const PAGE_SIZE = 500;

type Plan = UsagePlan & { id: string };

/**
 * How the stage's default usage plan is found. The functions know it by name (`embed-session-<stage>`:
 * its id would make them depend on the stage that depends on them); the admin CLI by id (the
 * `UsagePlanId` stack output, USAGE_PLAN_ID).
 */
export type DefaultPlan = { name: string } | { id: string };

/** The name of the usage plan of a key with its own limits: the default plan's name and the key id. */
export function ownPlanName(defaultPlanName: string, keyId: string): string {
  return `${defaultPlanName}-${keyId}`;
}

/** Keeps API Gateway's API keys and usage plans in step with our key records. */
export class UsagePlanKeys implements KeyThrottling {
  private resolved: Plan | undefined;

  constructor(
    private readonly client: APIGatewayClient,
    private readonly defaultPlanRef: DefaultPlan,
  ) {}

  /**
   * Puts a new key (or one issued before the stage had usage plans) into the default plan. Idempotent: a
   * key already in a plan of the stage (409) is registered, so a retried or repeated registration converges.
   */
  async register(keyId: string): Promise<void> {
    const apiKeyId = await this.ensureApiKey(keyId);
    await this.addToPlan(apiKeyId, await this.defaultPlanId());
  }

  async apply(keyId: string, limits: RateLimit | null): Promise<void> {
    const apiKeyId = await this.ensureApiKey(keyId);
    const defaultPlan = await this.defaultPlan();
    const own = await this.planNamed(ownPlanName(defaultPlan.name ?? defaultPlan.id, keyId));
    let target = defaultPlan.id;
    if (limits) {
      target = own
        ? await this.setThrottle(own, limits)
        : await this.createOwnPlan(defaultPlan, keyId, limits);
    }
    await this.moveKey(apiKeyId, target, defaultPlan.apiStages ?? []);
    // Back under the defaults: the plan of its own has nothing left to throttle.
    if (!limits && own) await this.deletePlan(own);
  }

  /**
   * Forgets a revoked key: its API Gateway key, and the usage plan of its own if it had limits (AWS allows
   * 300 usage plans per account and region, so none may be left behind). Run again, it finishes what an
   * interrupted run left: the plan is found by its name, not through the key.
   */
  async remove(keyId: string): Promise<void> {
    const apiKeyId = await this.findApiKey(keyId);
    // Deleting the API key also takes it out of every usage plan.
    if (apiKeyId) await outageAware(() => this.client.send(new DeleteApiKeyCommand({ apiKey: apiKeyId })));
    const own = await this.planNamed(ownPlanName(await this.defaultPlanName(), keyId));
    if (own) await this.deletePlan(own);
  }

  /**
   * The id of the key's API Gateway API key, created (enabled, value = usage identifier) if missing. API
   * Gateway refuses a second key with the same value (409): then another registration of the same key (two
   * first requests at once) created it, and that one is used.
   */
  private async ensureApiKey(keyId: string): Promise<string> {
    const existing = await this.findApiKey(keyId);
    if (existing) return existing;
    const usageId = usageIdentifierOf(keyId);
    try {
      const created = await outageAware(() =>
        this.client.send(
          new CreateApiKeyCommand({
            name: usageId,
            value: usageId,
            enabled: true,
            description: `Usage identifier of embed session API key ${keyId} (not a credential)`,
          }),
        ),
      );
      if (!created.id) throw new Error(`API Gateway returned no id for the API key of ${keyId}`);
      return created.id;
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
      const concurrent = await this.findApiKey(keyId);
      if (concurrent === undefined) throw error;
      return concurrent;
    }
  }

  /** The id of the key's API Gateway API key, if it has one. */
  private async findApiKey(keyId: string): Promise<string | undefined> {
    const usageId = usageIdentifierOf(keyId);
    // The name query matches prefixes, so the exact name is checked; values are not needed.
    const { items } = await outageAware(() =>
      this.client.send(new GetApiKeysCommand({ nameQuery: usageId, includeValues: false, limit: PAGE_SIZE })),
    );
    return items?.find((item) => item.name === usageId)?.id;
  }

  private async addToPlan(apiKeyId: string, usagePlanId: string): Promise<void> {
    try {
      await outageAware(() =>
        this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId, keyType: 'API_KEY' })),
      );
    } catch (error) {
      // In a plan of the stage already: a retry of this very registration.
      if (!(error instanceof ConflictException)) throw error;
    }
  }

  /** The default plan's id, without a call when it was given by id. */
  private async defaultPlanId(): Promise<string> {
    return 'id' in this.defaultPlanRef ? this.defaultPlanRef.id : (await this.defaultPlan()).id;
  }

  /** The default plan's name, without a call when it was given by name. */
  private async defaultPlanName(): Promise<string> {
    if ('name' in this.defaultPlanRef) return this.defaultPlanRef.name;
    const plan = await this.defaultPlan();
    return plan.name ?? plan.id;
  }

  /** The default plan (id, name, API and stage), read once per instance. */
  private async defaultPlan(): Promise<Plan> {
    if (this.resolved) return this.resolved;
    const ref = this.defaultPlanRef;
    let plan: Plan | undefined;
    if ('id' in ref) {
      const found = await outageAware(() =>
        this.client.send(new GetUsagePlanCommand({ usagePlanId: ref.id })),
      );
      plan = { ...found, id: found.id ?? ref.id };
    } else {
      plan = await this.planNamed(ref.name);
      if (!plan) throw new Error(`no usage plan is named ${ref.name}`);
    }
    this.resolved = plan;
    return plan;
  }

  /** Every usage plan of the account and region (or those holding one API key), page after page. */
  private async plans(apiKeyId?: string): Promise<Plan[]> {
    const plans: Plan[] = [];
    let position: string | undefined;
    do {
      const page = await outageAware(() =>
        this.client.send(
          new GetUsagePlansCommand({ limit: PAGE_SIZE, position, ...(apiKeyId ? { keyId: apiKeyId } : {}) }),
        ),
      );
      plans.push(...(page.items ?? []).filter((plan): plan is Plan => plan.id !== undefined));
      position = page.position;
    } while (position);
    return plans;
  }

  private async planNamed(name: string): Promise<Plan | undefined> {
    return (await this.plans()).find((plan) => plan.name === name);
  }

  private async createOwnPlan(defaultPlan: Plan, keyId: string, limits: RateLimit): Promise<string> {
    const created = await outageAware(() =>
      this.client.send(
        new CreateUsagePlanCommand({
          name: ownPlanName(defaultPlan.name ?? defaultPlan.id, keyId),
          description: `Own rate limit of embed session API key ${keyId}`,
          // The default plan's API and stage, without anything else it may carry.
          apiStages: (defaultPlan.apiStages ?? []).map(({ apiId, stage }) => ({ apiId, stage })),
          throttle: { rateLimit: limits.rate, burstLimit: limits.burst },
        }),
      ),
    );
    if (!created.id) throw new Error(`API Gateway returned no id for the usage plan of ${keyId}`);
    return created.id;
  }

  private async setThrottle(plan: Plan, limits: RateLimit): Promise<string> {
    await outageAware(() =>
      this.client.send(
        new UpdateUsagePlanCommand({
          usagePlanId: plan.id,
          patchOperations: [
            { op: 'replace', path: '/throttle/rateLimit', value: String(limits.rate) },
            { op: 'replace', path: '/throttle/burstLimit', value: String(limits.burst) },
          ],
        }),
      ),
    );
    return plan.id;
  }

  /**
   * Puts the API key into `target`, out of every other plan of the same stage first (one plan per stage
   * is all API Gateway allows). Between the two calls the key is in no plan and API Gateway refuses it: a
   * moment, once per change of limits. Plans of other APIs or stages are left alone.
   */
  private async moveKey(apiKeyId: string, target: string, stages: readonly ApiStage[]): Promise<void> {
    const current = await this.plans(apiKeyId);
    const sameStage = (plan: Plan) =>
      (plan.apiStages ?? []).some((a) => stages.some((b) => a.apiId === b.apiId && a.stage === b.stage));
    for (const plan of current) {
      if (plan.id !== target && sameStage(plan)) {
        await outageAware(() =>
          this.client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: plan.id, keyId: apiKeyId })),
        );
      }
    }
    if (!current.some((plan) => plan.id === target)) await this.addToPlan(apiKeyId, target);
  }

  /** API Gateway deletes a usage plan only once no stage is attached to it. */
  private async deletePlan(plan: Plan): Promise<void> {
    const stages = plan.apiStages ?? [];
    if (stages.length > 0) {
      await outageAware(() =>
        this.client.send(
          new UpdateUsagePlanCommand({
            usagePlanId: plan.id,
            patchOperations: stages.map(({ apiId, stage }) => ({
              op: 'remove',
              path: '/apiStages',
              value: `${apiId}:${stage}`,
            })),
          }),
        ),
      );
    }
    await outageAware(() => this.client.send(new DeleteUsagePlanCommand({ usagePlanId: plan.id })));
  }
}

/**
 * One call: API Gateway unreachable, failing or throttling once its attempts ran out is an outage (503
 * through the API; the CLI prints it and can be run again).
 */
async function outageAware<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isTransientAwsError(error)) throw new DependencyUnavailableError({ cause: error });
    throw error;
  }
}
