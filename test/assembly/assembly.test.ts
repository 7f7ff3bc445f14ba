import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { createApiKey, RECORD_ONLY_THROTTLING, revokeApiKey } from '#lib/use-cases/admin';
import { validBody } from '#test/support/fixtures';
import { testTarget } from '#test/support/local-runtime';
import { assemblyDir, node24Path, startAssemblyTestRuntime } from './fixture';
import { type AssemblyRuntime, startAssemblyRuntime } from './runtime';
import type { Json } from './template';

const ROOT = join(import.meta.dirname, '..', '..');
const onAssembly = testTarget() === 'assembly';

/** Runs an admin use case on the runtime's API keys table, with a client of its own. */
async function onApiKeys<T>(
  runtime: AssemblyRuntime,
  use: (deps: Parameters<typeof createApiKey>[0]) => Promise<T>,
): Promise<T> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    const apiKeys = new DynamoApiKeyRepository(db, runtime.tables.apiKeys);
    return await use({
      apiKeys,
      throttling: RECORD_ONLY_THROTTLING,
      clock: systemClock,
      random: cryptoRandom,
    });
  } finally {
    db.destroy();
  }
}

const newKey = (runtime: AssemblyRuntime) =>
  onApiKeys(runtime, (deps) => createApiKey(deps, String(runtime.demo?.userId), null));
const revokeKey = (runtime: AssemblyRuntime, keyId: string) =>
  onApiKeys(runtime, (deps) => revokeApiKey(deps, keyId));

function createCall(runtime: AssemblyRuntime, apiKey: string | undefined) {
  return fetch(`${runtime.baseUrl}/api/embed/sessions`, {
    method: 'POST',
    headers: {
      ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}),
      'Content-Type': 'application/json',
    },
    body: JSON.stringify(validBody({ boardId: String(runtime.demo?.publicBoardId) })),
  });
}

/** The logical id of the function whose description starts with `prefix`. */
function functionId(template: Json, prefix: string): string {
  const [id] = Object.entries(template.Resources as Record<string, Json>).find(
    ([, resource]) =>
      resource.Type === 'AWS::Lambda::Function' && String(resource.Properties.Description).startsWith(prefix),
  ) as [string, Json];
  return id;
}

describe.runIf(onAssembly)('the synthesized assembly, served as deployed', () => {
  let runtime: AssemblyRuntime;
  beforeAll(async () => {
    runtime = await startAssemblyTestRuntime();
  });
  afterAll(() => runtime?.close());

  it('routes each method to the function the template integrates, described by that route', () => {
    const methods = Object.entries(runtime.methods);
    expect(methods.length).toBeGreaterThan(5);
    for (const [route, logicalId] of methods) {
      const description = String(readTemplate().Resources[logicalId].Properties.Description);
      // The routes a description names (`GET /openapi.json and GET /docs: …`); `/docs/{asset}` is under `/docs`.
      const named = [...description.matchAll(/\b(GET|POST|PUT|DELETE|HEAD) (\/[^\s:,]*)/g)].map(
        (m) => `${m[1]} ${m[2]}`,
      );
      expect(
        named.some((own) => route === own || route.startsWith(`${own}/`)),
        `${route} → ${description}`,
      ).toBe(true);
    }
  });

  it('serves the OpenAPI document and the health check from their assets', async () => {
    const openapi = await fetch(`${runtime.baseUrl}/openapi.json`);
    expect(openapi.status).toBe(200);
    expect(await openapi.json()).toEqual(
      JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')),
    );
    expect((await fetch(`${runtime.baseUrl}/health`)).status).toBe(200);
  });

  it('answers a path outside the stage with the gateway response for no such route', async () => {
    const response = await fetch(runtime.baseUrl.replace(/\/prod$/, '/health'));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'Not Found', message: 'No such route' });
  });

  it('refuses a request without the identity source header (401) without invoking the authorizer', async () => {
    const before = runtime.iam().calls.length;
    const response = await createCall(runtime, undefined);
    expect(response.status).toBe(401);
    expect(runtime.iam().calls.length).toBe(before);
  });

  it('keeps a revoked key working until the authorizer result TTL of the template passes', async () => {
    const { apiKey, keyId } = await newKey(runtime);
    expect((await createCall(runtime, apiKey)).status).toBe(201);
    await revokeKey(runtime, keyId);
    // The cached Allow policy (TTL 300 s in cdk.json) still lets the revoked key through: the revocation delay.
    expect((await createCall(runtime, apiKey)).status).toBe(201);
    // A key revoked before its first use was never cached: refused at once.
    const fresh = await newKey(runtime);
    await revokeKey(runtime, fresh.keyId);
    expect((await createCall(runtime, fresh.apiKey)).status).toBe(401);
  });

  it('gives each function exactly the template variables and Lambda’s own, nothing of the test process', async () => {
    process.env.ASSEMBLY_SENTINEL = 'must-not-leak';
    const response = await fetch(`${runtime.baseUrl}/health`);
    expect(response.status).toBe(200);
    const { functionEnvironment } = await import('./runtime');
    for (const fn of Object.values(runtime.functions)) {
      const env = functionEnvironment(fn, 'eu-west-1', 'http://127.0.0.1:1');
      expect(env.ASSEMBLY_SENTINEL).toBeUndefined();
      for (const [key, value] of Object.entries(fn.environment)) expect(env[key]).toBe(value);
      expect(env.AWS_ACCESS_KEY_ID).toMatch(/FAKE/);
    }
    delete process.env.ASSEMBLY_SENTINEL;
  });
});

describe.runIf(onAssembly)('a deliberately broken copy of the template fails the run', () => {
  it('a grant missing one index ARN: the call is denied as IAM would, and the test file fails', async () => {
    const runtime = await startAssemblyTestRuntime(
      {
        editTemplate: (template) => {
          const list = functionId(template, 'GET /api/embed/sessions:');
          const role = template.Resources[list].Properties.Role['Fn::GetAtt'][0];
          for (const policy of Object.values(template.Resources as Record<string, Json>)) {
            if (policy.Type !== 'AWS::IAM::Policy' || policy.Properties.Roles[0].Ref !== role) continue;
            for (const statement of policy.Properties.PolicyDocument.Statement) {
              if (!Array.isArray(statement.Resource)) continue;
              statement.Resource = statement.Resource.filter(
                (resource: Json) => !JSON.stringify(resource).includes('/index/board-index'),
              );
            }
          }
        },
      },
      { report: false },
    );
    let closing: Promise<void> | undefined;
    try {
      const response = await fetch(
        `${runtime.baseUrl}/api/embed/sessions?boardId=${runtime.demo?.publicBoardId}`,
        { headers: { Authorization: `Bearer ${runtime.demo?.apiKey}` } },
      );
      expect(response.status).toBeGreaterThanOrEqual(500);
      const denied = runtime.iam().denied;
      expect(denied.length).toBeGreaterThan(0);
      expect(denied[0]?.operation).toBe('Query');
      expect(denied[0]?.checks[0]?.resource).toMatch(/\/index\/board-index$/);
      // The fixture's close fails the test file that made the denied call.
      closing = runtime.close();
      await expect(closing).rejects.toThrow(/IAM would deny/);
    } finally {
      if (!closing) await runtime.close().catch(() => undefined);
    }
  });

  it('a variable the template does not set: the function fails at init and API Gateway answers 502', async () => {
    const runtime = await startAssemblyRuntime({
      dir: assemblyDir(),
      node: node24Path(),
      editTemplate: (template) => {
        const create = functionId(template, 'POST /api/embed/sessions:');
        delete template.Resources[create].Properties.Environment.Variables.SESSIONS_TABLE;
      },
    });
    try {
      const response = await createCall(runtime, runtime.demo?.apiKey);
      expect(response.status).toBe(502);
      expect(runtime.invocationErrors).toContainEqual(
        expect.objectContaining({ init: true, message: expect.stringContaining('SESSIONS_TABLE') }),
      );
    } finally {
      await runtime.close();
    }
  });
});

describe.runIf(!onAssembly)('the assembly runner (skipped: runs under `npm run test:assembly`)', () => {
  it.skip('serves the synthesized assembly; see npm run test:assembly', () => {});
});

function readTemplate(): Json {
  const dir = assemblyDir();
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  const stack = Object.values(manifest.artifacts as Record<string, Json>).find(
    (artifact) => artifact.type === 'aws:cloudformation:stack',
  );
  return JSON.parse(readFileSync(join(dir, stack.properties.templateFile), 'utf8'));
}
