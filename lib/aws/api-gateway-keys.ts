/**
 * API Gateway's API keys and usage plans, for the provisioning function: the keys it issues must be in a
 * usage plan of the stage (API Gateway refuses a key in none), and the keys it revokes leave them. The
 * admin CLI does the same through the SDK client (admin/usage-plans.ts, a dev dependency); a Lambda bundle
 * signs the few REST calls itself, with the signer and credentials it already holds for DynamoDB.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { type RateLimit, usageIdentifierOf } from '#lib/domain/api-key';
import { DependencyUnavailableError } from '#lib/domain/errors';
import type { KeyThrottling } from '#lib/domain/ports';
import { Sha256 } from './json-protocol';

type Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** One signed call of API Gateway's REST API: its JSON answer, or an error naming its status. */
export type ApiGatewayCall = (
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: Record<string, unknown>,
) => Promise<Record<string, unknown>>;

/** An API Gateway answer other than a success. */
export class ApiGatewayError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`API Gateway answered ${status}: ${message}`);
    this.name = 'ApiGatewayError';
  }
}

/** How long one call may take: the provisioning function's request budget is a few seconds. */
const CALL_TIMEOUT_MS = 3_000;

/** A signed caller of API Gateway's control plane in `region` (another endpoint in tests). */
export function apiGatewayCall(options: {
  region: string;
  endpoint?: string;
  credentials?: Credentials;
}): ApiGatewayCall {
  const base = new URL(options.endpoint ?? `https://apigateway.${options.region}.amazonaws.com/`);
  const given = options.credentials;
  const signer = new SignatureV4({
    service: 'apigateway',
    region: options.region,
    sha256: Sha256,
    credentials: given ? async () => given : defaultProvider(),
    applyChecksum: false,
  });
  return async (method, path, body) => {
    const url = new URL(path, base);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const signed = await signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: {
        host: url.host,
        accept: 'application/json',
        ...(text !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(text !== undefined ? { body: text } : {}),
    });
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: signed.headers,
        ...(text !== undefined ? { body: text } : {}),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (error) {
      throw new DependencyUnavailableError({ cause: error });
    }
    const answer = await response.text();
    const parsed = answer ? (JSON.parse(answer) as Record<string, unknown>) : {};
    if (response.ok) return parsed;
    if (response.status === 429 || response.status >= 500)
      throw new DependencyUnavailableError({ cause: new ApiGatewayError(response.status, answer) });
    throw new ApiGatewayError(response.status, String(parsed.message ?? ''));
  };
}

/**
 * Keeps the stage's default usage plan (found by its name, `embed-session-<stage>`: its id would make
 * the function depend on the stage that depends on it) in step with the keys the function issues and
 * revokes. A key's own limits stay the admin CLI's (`set-rate-limit`).
 */
export class UsagePlanKeys implements KeyThrottling {
  private planId: string | undefined;

  constructor(
    private readonly call: ApiGatewayCall,
    private readonly planName: string,
  ) {}

  async register(keyId: string): Promise<void> {
    const usageId = usageIdentifierOf(keyId);
    const apiKeyId =
      (await this.findApiKey(keyId)) ??
      String(
        (
          await this.call('POST', '/apikeys', {
            name: usageId,
            value: usageId,
            enabled: true,
            description: `Usage identifier of embed session API key ${keyId} (not a credential)`,
          })
        ).id,
      );
    try {
      await this.call('POST', `/usageplans/${await this.defaultPlanId()}/keys`, {
        keyId: apiKeyId,
        keyType: 'API_KEY',
      });
    } catch (error) {
      // In the plan already: a retry of this very registration.
      if (!(error instanceof ApiGatewayError && error.status === 409)) throw error;
    }
  }

  async apply(keyId: string, limits: RateLimit | null): Promise<void> {
    if (limits) throw new Error('a key’s own limits are set with the admin CLI (set-rate-limit)');
    await this.register(keyId);
  }

  async remove(keyId: string): Promise<void> {
    const apiKeyId = await this.findApiKey(keyId);
    // Deleting the API key also takes it out of every usage plan.
    if (apiKeyId) await this.call('DELETE', `/apikeys/${encodeURIComponent(apiKeyId)}`);
  }

  private async findApiKey(keyId: string): Promise<string | undefined> {
    const usageId = usageIdentifierOf(keyId);
    // The name query matches prefixes, so the exact name is checked; values are not needed.
    const page = await this.call(
      'GET',
      `/apikeys?name=${encodeURIComponent(usageId)}&includeValues=false&limit=500`,
    );
    const items = (page.item ?? page.items ?? []) as Array<{ id?: string; name?: string }>;
    return items.find((item) => item.name === usageId)?.id;
  }

  private async defaultPlanId(): Promise<string> {
    if (this.planId !== undefined) return this.planId;
    let position: string | undefined;
    do {
      const page = await this.call(
        'GET',
        `/usageplans?limit=500${position ? `&position=${encodeURIComponent(position)}` : ''}`,
      );
      const items = (page.item ?? page.items ?? []) as Array<{ id?: string; name?: string }>;
      const plan = items.find((item) => item.name === this.planName);
      if (plan?.id) {
        this.planId = plan.id;
        return plan.id;
      }
      position = typeof page.position === 'string' ? page.position : undefined;
    } while (position);
    throw new Error(`no usage plan is named ${this.planName}`);
  }
}
