/**
 * Per-key throttling in AWS, for the admin CLI only: no function imports this module or
 * `@aws-sdk/client-api-gateway` (a dev dependency), so the Lambda bundles do not grow.
 *
 * Each API key of ours has an API Gateway API key whose name and value are its usage identifier (the
 * authorizer returns it as `usageIdentifierKey`). That key sits in the stack's default usage plan, or, when
 * the key has limits of its own, in a usage plan of its own on the same stage: API Gateway lets a key be in
 * one usage plan per stage, and throttles per plan.
 */
import {
  type APIGatewayClient,
  type ApiStage,
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
import type { KeyThrottling } from '#lib/domain/ports';

/** The most items API Gateway returns per page. */
const PAGE_SIZE = 500;

type Plan = UsagePlan & { id: string };

/** The name of the usage plan of a key with its own limits: the default plan's name and the key id. */
export function ownPlanName(defaultPlanName: string, keyId: string): string {
  return `${defaultPlanName}-${keyId}`;
}

/** Keeps API Gateway's API keys and usage plans in step with our key records. */
export class ApiGatewayKeyThrottling implements KeyThrottling {
  constructor(
    private readonly client: APIGatewayClient,
    /** The stack's default usage plan (the `UsagePlanId` output); it also names the API and stage. */
    private readonly defaultPlanId: string,
  ) {}

  async register(keyId: string): Promise<void> {
    const apiKeyId = await this.ensureApiKey(keyId);
    // A new key is in no plan yet; the default plan is where keys without limits of their own belong.
    await this.client.send(
      new CreateUsagePlanKeyCommand({ usagePlanId: this.defaultPlanId, keyId: apiKeyId, keyType: 'API_KEY' }),
    );
  }

  async apply(keyId: string, limits: RateLimit | null): Promise<void> {
    const apiKeyId = await this.ensureApiKey(keyId);
    const defaultPlan = await this.defaultPlan();
    const own = await this.planNamed(ownPlanName(defaultPlan.name ?? this.defaultPlanId, keyId));
    let target = this.defaultPlanId;
    if (limits) {
      target = own
        ? await this.setThrottle(own, limits)
        : await this.createOwnPlan(defaultPlan, keyId, limits);
    }
    await this.moveKey(apiKeyId, target, defaultPlan.apiStages ?? []);
    // Back under the defaults: the plan of its own has nothing left to throttle.
    if (!limits && own) await this.deletePlan(own);
  }

  async remove(keyId: string): Promise<void> {
    const apiKey = await this.findApiKey(keyId);
    // Deleting the API key also takes it out of every usage plan.
    if (apiKey) await this.client.send(new DeleteApiKeyCommand({ apiKey }));
    const defaultPlan = await this.defaultPlan();
    const own = await this.planNamed(ownPlanName(defaultPlan.name ?? this.defaultPlanId, keyId));
    if (own) await this.deletePlan(own);
  }

  /** The id of the key's API Gateway API key, created (enabled, value = usage identifier) if missing. */
  private async ensureApiKey(keyId: string): Promise<string> {
    const existing = await this.findApiKey(keyId);
    if (existing) return existing;
    const usageId = usageIdentifierOf(keyId);
    const created = await this.client.send(
      new CreateApiKeyCommand({
        name: usageId,
        value: usageId,
        enabled: true,
        description: `Usage identifier of embed session API key ${keyId} (not a credential)`,
      }),
    );
    if (!created.id) throw new Error(`API Gateway returned no id for the API key of ${keyId}`);
    return created.id;
  }

  /** The id of the key's API Gateway API key, if it has one. */
  private async findApiKey(keyId: string): Promise<string | undefined> {
    const usageId = usageIdentifierOf(keyId);
    // The name query matches prefixes, so the exact name is checked; values are not needed.
    const { items } = await this.client.send(
      new GetApiKeysCommand({ nameQuery: usageId, includeValues: false, limit: PAGE_SIZE }),
    );
    return items?.find((item) => item.name === usageId)?.id;
  }

  private async defaultPlan(): Promise<UsagePlan> {
    return this.client.send(new GetUsagePlanCommand({ usagePlanId: this.defaultPlanId }));
  }

  /** Every usage plan of the account and region (or those holding one API key), page after page. */
  private async plans(apiKeyId?: string): Promise<Plan[]> {
    const plans: Plan[] = [];
    let position: string | undefined;
    do {
      const page = await this.client.send(
        new GetUsagePlansCommand({ limit: PAGE_SIZE, position, ...(apiKeyId ? { keyId: apiKeyId } : {}) }),
      );
      plans.push(...(page.items ?? []).filter((plan): plan is Plan => plan.id !== undefined));
      position = page.position;
    } while (position);
    return plans;
  }

  private async planNamed(name: string): Promise<Plan | undefined> {
    return (await this.plans()).find((plan) => plan.name === name);
  }

  private async createOwnPlan(defaultPlan: UsagePlan, keyId: string, limits: RateLimit): Promise<string> {
    const created = await this.client.send(
      new CreateUsagePlanCommand({
        name: ownPlanName(defaultPlan.name ?? this.defaultPlanId, keyId),
        description: `Own rate limit of embed session API key ${keyId}`,
        // The default plan's API and stage, without anything else it may carry.
        apiStages: (defaultPlan.apiStages ?? []).map(({ apiId, stage }) => ({ apiId, stage })),
        throttle: { rateLimit: limits.rate, burstLimit: limits.burst },
      }),
    );
    if (!created.id) throw new Error(`API Gateway returned no id for the usage plan of ${keyId}`);
    return created.id;
  }

  private async setThrottle(plan: Plan, limits: RateLimit): Promise<string> {
    await this.client.send(
      new UpdateUsagePlanCommand({
        usagePlanId: plan.id,
        patchOperations: [
          { op: 'replace', path: '/throttle/rateLimit', value: String(limits.rate) },
          { op: 'replace', path: '/throttle/burstLimit', value: String(limits.burst) },
        ],
      }),
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
        await this.client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: plan.id, keyId: apiKeyId }));
      }
    }
    if (!current.some((plan) => plan.id === target)) {
      await this.client.send(
        new CreateUsagePlanKeyCommand({ usagePlanId: target, keyId: apiKeyId, keyType: 'API_KEY' }),
      );
    }
  }

  /** API Gateway deletes a usage plan only once no stage is attached to it. */
  private async deletePlan(plan: Plan): Promise<void> {
    const stages = plan.apiStages ?? [];
    if (stages.length > 0) {
      await this.client.send(
        new UpdateUsagePlanCommand({
          usagePlanId: plan.id,
          patchOperations: stages.map(({ apiId, stage }) => ({
            op: 'remove',
            path: '/apiStages',
            value: `${apiId}:${stage}`,
          })),
        }),
      );
    }
    await this.client.send(new DeleteUsagePlanCommand({ usagePlanId: plan.id }));
  }
}
