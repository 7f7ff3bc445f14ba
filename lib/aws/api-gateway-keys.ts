/**
 * API Gateway's API keys and usage plans, for the provisioning function: the keys it issues must be in a
 * usage plan of the stage (API Gateway refuses a key in none), and the keys it revokes leave them. The
 * authorizer registers, the same way, a key issued before the stage had usage plans. Through
 * the SDK's own client, under the one timeout and retry policy of every AWS call (lib/platform/aws-clients.ts).
 */
import {
  type APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import { type RateLimit, usageIdentifierOf } from '#lib/domain/api-key';
import { DependencyUnavailableError } from '#lib/domain/errors';
import type { KeyThrottling } from '#lib/domain/ports';
import { isTransientAwsError } from '#lib/platform/aws-clients';

/** The most items API Gateway returns per page. */
const PAGE_SIZE = 500;

/**
 * Keeps the stage's default usage plan (found by its name, `embed-session-<stage>`: its id would make
 * the function depend on the stage that depends on it) in step with the keys the function issues and
 * revokes. A key's own limits stay the admin CLI's (`set-rate-limit`).
 */
export class UsagePlanKeys implements KeyThrottling {
  private planId: string | undefined;

  constructor(
    private readonly client: APIGatewayClient,
    private readonly planName: string,
  ) {}

  async register(keyId: string): Promise<void> {
    const apiKeyId = (await this.findApiKey(keyId)) ?? (await this.createApiKey(keyId));
    try {
      const usagePlanId = await this.defaultPlanId();
      await outageAware(() =>
        this.client.send(
          new CreateUsagePlanKeyCommand({ usagePlanId, keyId: String(apiKeyId), keyType: 'API_KEY' }),
        ),
      );
    } catch (error) {
      // In the plan already: a retry of this very registration.
      if (!(error instanceof ConflictException)) throw error;
    }
  }

  async apply(keyId: string, limits: RateLimit | null): Promise<void> {
    if (limits) throw new Error('a key’s own limits are set with the admin CLI (set-rate-limit)');
    await this.register(keyId);
  }

  async remove(keyId: string): Promise<void> {
    const apiKeyId = await this.findApiKey(keyId);
    // Deleting the API key also takes it out of every usage plan.
    if (apiKeyId) await outageAware(() => this.client.send(new DeleteApiKeyCommand({ apiKey: apiKeyId })));
  }

  /**
   * Creates the key's API Gateway key. API Gateway refuses a second key with the same value (409): then
   * another registration of the same key (two first requests at once) created it, and that one is used.
   */
  private async createApiKey(keyId: string): Promise<string | undefined> {
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
      return created.id;
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
      const existing = await this.findApiKey(keyId);
      if (existing === undefined) throw error;
      return existing;
    }
  }

  private async findApiKey(keyId: string): Promise<string | undefined> {
    const usageId = usageIdentifierOf(keyId);
    // The name query matches prefixes, so the exact name is checked; values are not needed.
    const page = await outageAware(() =>
      this.client.send(new GetApiKeysCommand({ nameQuery: usageId, includeValues: false, limit: PAGE_SIZE })),
    );
    return page.items?.find((item) => item.name === usageId)?.id;
  }

  private async defaultPlanId(): Promise<string> {
    if (this.planId !== undefined) return this.planId;
    let position: string | undefined;
    do {
      const page = await outageAware(() =>
        this.client.send(new GetUsagePlansCommand({ limit: PAGE_SIZE, position })),
      );
      const plan = page.items?.find((item) => item.name === this.planName);
      if (plan?.id) {
        this.planId = plan.id;
        return plan.id;
      }
      position = page.position;
    } while (position);
    throw new Error(`no usage plan is named ${this.planName}`);
  }
}

/** One call: API Gateway unreachable, failing or throttling once its attempts ran out is an outage (503). */
async function outageAware<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isTransientAwsError(error)) throw new DependencyUnavailableError({ cause: error });
    throw error;
  }
}
