import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUNDLING, bundleOf, esbuildOptions, LAMBDA_SDK_ENVIRONMENT } from '#infra/bundling';
import { PROJECT_ROOT } from '#infra/constructs/service-function';
import { LAMBDA_RESERVE_MS, REQUEST_BUDGET_MS } from '#lib/adapters/http/middlewares/request-budget';
import { BACKGROUND_FUNCTIONS } from '#lib/definitions/background';
import { variablesOf } from '#lib/definitions/environment';
import {
  API_GATEWAY_TIMEOUT_SECONDS,
  FUNCTIONS,
  type FunctionDefinition,
  runtimeOf,
} from '#lib/definitions/routes';
import { TABLES, type TableKey } from '#lib/definitions/tables';
import { javascriptFilesIn, reachedFiles } from '#test/support/bundle-files';
import type { Json } from '#test/support/infra';
import {
  allowedDynamoGrants,
  dynamoGrants,
  functionByDescription,
  resources,
  roleStatements,
  tableLogicalIds,
} from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const NAMES = Object.keys(FUNCTIONS) as (keyof typeof FUNCTIONS)[];

// The only infra test file that runs esbuild for real: it checks the bundles themselves.
const synth = useSynthesized({ bundle: true });
let ids: ReturnType<typeof tableLogicalIds>;

beforeAll(() => {
  ids = tableLogicalIds(synth.template);
});

const fnOf = (name: keyof typeof FUNCTIONS): Json =>
  functionByDescription(synth.template, FUNCTIONS[name].description)[1];
/** The folder of a function's bundled asset in the cloud assembly. */
const assetDirOf = (name: keyof typeof FUNCTIONS): string =>
  join(synth.outdir, fnOf(name).Metadata['aws:asset:path']);

const unminified = new Map<keyof typeof FUNCTIONS, string>();
/**
 * The function's JavaScript (entry and chunks) bundled as the stack bundles it but not minified: built
 * once per function, in memory, for the minification checks.
 */
function unminifiedOf(name: keyof typeof FUNCTIONS): string {
  let code = unminified.get(name);
  if (code === undefined) {
    const { outputFiles } = bundleOf({
      ...esbuildOptions(join(PROJECT_ROOT, FUNCTIONS[name].entry), join(tmpdir(), 'unminified', name)),
      absWorkingDir: PROJECT_ROOT,
      minify: false,
      sourcemap: false,
    });
    code = outputFiles.map((file) => file.text).join('');
    unminified.set(name, code);
  }
  return code;
}
const roleOf = (name: keyof typeof FUNCTIONS): string => fnOf(name).Properties.Role['Fn::GetAtt'][0];
const grantsOf = (name: keyof typeof FUNCTIONS): string[] =>
  dynamoGrants(roleStatements(synth.template, roleOf(name)), ids);

describe('Lambda functions', () => {
  it('creates exactly one function per entry of the function table and of the background functions', () => {
    expect(Object.keys(resources(synth.template, 'AWS::Lambda::Function'))).toHaveLength(
      NAMES.length + Object.keys(BACKGROUND_FUNCTIONS).length,
    );
  });

  it.each(NAMES)('runs %s on Node.js 24 on arm64 with 512 MB and a 20 s timeout', (name) => {
    const props = fnOf(name).Properties;
    expect(props.Runtime).toBe('nodejs24.x');
    expect(props.Architectures).toEqual(['arm64']);
    expect(props.MemorySize).toBe(512);
    expect(props.Timeout).toBe(20);
    expect(props.Handler).toBe('index.handler');
  });

  it.each(NAMES)("lets %s, after the authorizer's worst case, answer inside API Gateway's 29 s", (name) => {
    // The authorizer's worst case: its request budget, then the reserve Lambda time it keeps to answer.
    const authorizerWorstSeconds = (REQUEST_BUDGET_MS + LAMBDA_RESERVE_MS) / 1_000;
    const timeout = fnOf(name).Properties.Timeout as number;
    expect(timeout).toBe(runtimeOf(FUNCTIONS[name]).timeoutSeconds);
    expect(authorizerWorstSeconds + timeout).toBeLessThanOrEqual(API_GATEWAY_TIMEOUT_SECONDS);
  });

  it.each(NAMES)('gives %s the names of exactly the tables it may use', (name) => {
    const variables = fnOf(name).Properties.Environment.Variables;
    const tableVariables = Object.keys(variables).filter((v) => v.endsWith('_TABLE'));
    const expected = (Object.keys(FUNCTIONS[name].access) as TableKey[]).map((key) => TABLES[key].envVar);
    expect(tableVariables.sort()).toEqual(expected.sort());
    for (const key of Object.keys(FUNCTIONS[name].access) as TableKey[]) {
      expect(variables[TABLES[key].envVar]).toEqual({ Ref: ids[key] });
    }
  });

  it.each(NAMES)(
    'gives %s only the variables of its definition and the SDK settings: the default log level when it logs, no NODE_OPTIONS, which would slow cold starts',
    (name) => {
      const variables = fnOf(name).Properties.Environment.Variables;
      const allowed = new Set([...variablesOf(FUNCTIONS[name]), ...Object.keys(LAMBDA_SDK_ENVIRONMENT)]);
      expect(Object.keys(variables).filter((variable) => !allowed.has(variable))).toEqual([]);
      expect(variables.NODE_OPTIONS).toBeUndefined();
      const logs = variablesOf(FUNCTIONS[name]).includes('LOG_LEVEL');
      expect(variables.LOG_LEVEL).toBe(logs ? 'info' : undefined);
      // Without publicBaseUrl the functions derive embed URLs from the API Gateway request.
      expect(variables.PUBLIC_BASE_URL).toBeUndefined();
    },
  );

  it.each(NAMES)(
    'gives %s every AWS SDK setting in its environment, so its first request reads no ~/.aws file',
    (name) => {
      const variables = fnOf(name).Properties.Environment.Variables;
      expect(Object.keys(LAMBDA_SDK_ENVIRONMENT).length).toBeGreaterThan(0);
      for (const [key, value] of Object.entries(LAMBDA_SDK_ENVIRONMENT)) {
        expect(variables[key], key).toBe(value);
      }
    },
  );

  it.each(NAMES)('grants %s exactly the DynamoDB actions of its access list', (name) => {
    expect(grantsOf(name)).toEqual(allowedDynamoGrants(FUNCTIONS[name]));
  });

  it('grants the authorizer GetItem on the API keys table, and UpdateItem for a key’s last use', () => {
    expect(grantsOf('authorizer')).toEqual(['GetItem on apiKeys', 'UpdateItem on apiKeys']);
  });

  it('grants create-session reads of boards and memberships, writes and reads of sessions, and its idempotency records', () => {
    // GetItem on sessions tells a retried put that met its own write from a conflict (no Query, no Scan).
    expect(grantsOf('createSession')).toEqual([
      'GetItem on boards',
      'GetItem on idempotency',
      'GetItem on memberships',
      'GetItem on sessions',
      'PutItem on idempotency',
      'PutItem on sessions',
      'UpdateItem on idempotency',
    ]);
  });

  it('grants the embed page the token index, the session itself and its board, the update that binds, and the keyring', () => {
    // BatchGetItem: the session with the cut-off records that could cover it (the same table).
    expect(grantsOf('embedPage')).toEqual([
      'BatchGetItem on sessions',
      'GetItem on boards',
      'GetItem on sessions',
      'GetItem on signingKeys',
      'Query on sessions/index/tokenHash-index',
      'UpdateItem on sessions',
    ]);
  });

  it('grants the embed script function no table at all: it serves a constant', () => {
    expect(grantsOf('embedScript')).toEqual([]);
    expect(
      Object.keys(fnOf('embedScript').Properties.Environment.Variables).filter((v) => v.endsWith('_TABLE')),
    ).toEqual([]);
  });

  it('grants retrieve reads of one session and of memberships only', () => {
    expect(grantsOf('getSession')).toEqual([
      'BatchGetItem on sessions',
      'GetItem on memberships',
      'GetItem on sessions',
    ]);
  });

  it('grants listing reads only: the scope indexes, batches of sessions, boards and memberships', () => {
    expect(grantsOf('listSessions')).toEqual([
      'BatchGetItem on memberships',
      'BatchGetItem on sessions',
      'GetItem on boards',
      'GetItem on memberships',
      'Query on memberships/index/userId-index',
      'Query on sessions/index/board-index',
      'Query on sessions/index/creatorBoard-index',
      'Query on sessions/index/creatorUser-index',
      'Query on sessions/index/orgUser-index',
    ]);
  });

  it('grants revoke-all the scopes it counts, single memberships, and the cut-off writes, but no member list', () => {
    // No Query of the memberships table itself: no organization's member list is read (issue 33); a
    // creator's membership is one GetItem, the caller's organizations the userId index.
    expect(grantsOf('revokeUserSessions')).toEqual([
      'BatchGetItem on memberships',
      'BatchGetItem on sessions',
      'GetItem on boards',
      'GetItem on memberships',
      'Query on memberships/index/userId-index',
      'Query on sessions/index/board-index',
      'Query on sessions/index/creatorUser-index',
      'Query on sessions/index/orgUser-index',
      'UpdateItem on sessions',
    ]);
  });

  it('lets only the two revoking functions, the provisioning API and the embed page update sessions', () => {
    // The embed page updates a session on the first load of a bindToBrowser link, and then only its two
    // binding attributes (bindingHash, boundAt) in one conditional write (lib/adapters/dynamodb/sessions.ts `bind`,
    // its only update): it can neither revoke, un-revoke nor extend a session. The provisioning API writes
    // cut-off records only (a deleted board's, a revoked key's, a removed member's sessions), each read
    // consistently before its conditional merge.
    const updaters = NAMES.filter((name) => grantsOf(name).includes('UpdateItem on sessions'));
    expect(updaters.sort()).toEqual(['embedPage', 'provisioning', 'revokeSession', 'revokeUserSessions']);
    expect(grantsOf('provisioning').filter((grant) => grant.endsWith(' on sessions'))).toEqual([
      'BatchGetItem on sessions',
      'UpdateItem on sessions',
    ]);
    expect(grantsOf('revokeSession')).toEqual([
      'BatchGetItem on sessions',
      'GetItem on memberships',
      'GetItem on sessions',
      'UpdateItem on sessions',
    ]);
  });

  it('lets no function but the provisioning API scan or delete anything, and that one only boards, members and keys: an idempotency record keeps its reservation until it expires, a deleted webhook endpoint its tombstone', () => {
    const all = NAMES.flatMap((name) => grantsOf(name).map((grant) => `${name}: ${grant}`));
    const deletes = all.filter((grant) => /: (DeleteItem|Scan|BatchWriteItem)/.test(grant));
    expect(deletes.sort()).toEqual([
      'provisioning: DeleteItem on boards',
      'provisioning: DeleteItem on memberships',
      'provisioning: Scan on apiKeys',
      'provisioning: Scan on boards',
    ]);
    // UpdateItem only gives the deleted endpoint's place in the owner's registry back.
    expect(grantsOf('deleteWebhook')).toEqual([
      'GetItem on webhooks',
      'PutItem on webhooks',
      'UpdateItem on webhooks',
    ]);
  });

  it.each(NAMES)('lets %s write only to its own log group, with retention', (name) => {
    const props = fnOf(name).Properties;
    const logGroupId = props.LoggingConfig.LogGroup.Ref;
    expect(resources(synth.template, 'AWS::Logs::LogGroup')[logGroupId].Properties.RetentionInDays).toBe(30);
    const logStatements = roleStatements(synth.template, roleOf(name)).filter((s) =>
      [s.Action].flat().some((a: string) => a.startsWith('logs:')),
    );
    expect(logStatements).toEqual([
      {
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
      },
    ]);
  });

  it.each(NAMES)(
    'attaches no managed policy and no wildcard resource to the role of %s (API Gateway’s API keys aside)',
    (name) => {
      const role = resources(synth.template, 'AWS::IAM::Role')[roleOf(name)];
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      // The provisioning function's API Gateway keys have ids API Gateway draws: see the next test.
      const targets = roleStatements(synth.template, roleOf(name))
        .filter((s) => ![s.Action].flat().some((action: string) => action.startsWith('apigateway:')))
        .flatMap((s) => [s.Resource].flat());
      expect(JSON.stringify(targets)).not.toContain('*');
    },
  );

  it('gives API Gateway rights to the provisioning function and the authorizer alone, and delete to provisioning only', () => {
    const apiGatewayActions = (name: keyof typeof FUNCTIONS) =>
      roleStatements(synth.template, roleOf(name))
        .flatMap((s) => [s.Action].flat() as string[])
        .filter((action) => action.startsWith('apigateway:'))
        .sort();
    const withApiGateway = NAMES.filter((name) => apiGatewayActions(name).length > 0);
    expect(withApiGateway.sort()).toEqual(['authorizer', 'provisioning']);
    expect(apiGatewayActions('provisioning')).toEqual([
      'apigateway:DELETE',
      'apigateway:GET',
      'apigateway:PATCH',
      'apigateway:POST',
    ]);
    // Registering a key from before usage plans: find the plan and the key, create the key, add it.
    expect(apiGatewayActions('authorizer')).toEqual(['apigateway:GET', 'apigateway:POST']);
  });

  it('tells the authorizer the stage’s default usage plan, where it registers keys issued before usage plans', () => {
    expect(fnOf('authorizer').Properties.Environment.Variables.USAGE_PLAN_NAME).toBe(
      fnOf('provisioning').Properties.Environment.Variables.USAGE_PLAN_NAME,
    );
    expect(fnOf('authorizer').Properties.Environment.Variables.USAGE_PLAN_NAME).toMatch(/^embed-session-/);
  });

  it.each(NAMES)(
    'bundles %s in process into index.mjs and the chunks it loads, each an ES module with the require shim and its own map',
    (name) => {
      const fn = fnOf(name);
      expect(fn.Metadata['aws:asset:is-bundled']).toBe(true);
      const dir = assetDirOf(name);
      const files = javascriptFilesIn(dir);
      expect(files).toContain(join(dir, 'index.mjs'));
      expect(files.filter((file) => file !== join(dir, 'index.mjs'))).toEqual(
        files.filter((file) => file.startsWith(join(dir, 'chunks', '/'))),
      );
      for (const file of files) {
        expect(readFileSync(file, 'utf8').startsWith(BUNDLING.banner), file).toBe(true);
        expect(JSON.parse(readFileSync(`${file}.map`, 'utf8')).sourcesContent, file).toBeUndefined();
      }
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).toMatch(
        /export\s*\{[^}]*\bas handler\b|export\s*\{\s*handler\s*\}/,
      );
    },
  );

  it.each(NAMES)(
    'ships in %s’s asset only what its entry can load, and the files its definition reads',
    (name) => {
      const dir = assetDirOf(name);
      const { atStart, onDemand } = reachedFiles(join(dir, 'index.mjs'));
      // No chunk the entry never imports: esbuild makes one for every import() of the module graph.
      expect(javascriptFilesIn(dir)).toEqual([...atStart, ...onDemand].sort());
      const shipped = readdirSync(dir).filter((file) => !/\.mjs(\.map)?$/.test(file) && file !== 'chunks');
      expect(shipped.sort()).toEqual(
        ((FUNCTIONS[name] as FunctionDefinition).files ?? [])
          .map((file: string) => file.replace(/.*\//, ''))
          .sort(),
      );
    },
  );

  it('loads no KMS client when the embed page starts: it is in a chunk the page imports only to sign', () => {
    // "TrentService" is KMS's API name, which every request of KMS's client carries.
    const holdsKms = (file: string) => readFileSync(file, 'utf8').includes('TrentService');
    const { atStart, onDemand } = reachedFiles(join(assetDirOf('embedPage'), 'index.mjs'));
    expect(atStart.filter(holdsKms)).toEqual([]);
    expect(onDemand.filter(holdsKms)).not.toEqual([]);
    // The marker is in the asset of every function whose definition calls KMS, and in no other.
    const callsKms = NAMES.filter((name) => {
      const definition: FunctionDefinition = FUNCTIONS[name];
      return (definition.kms ?? []).length > 0 || definition.webhookSecrets === true;
    });
    expect(NAMES.filter((name) => javascriptFilesIn(assetDirOf(name)).some(holdsKms))).toEqual(callsKms);
  });

  // The embed script function is mostly the script it serves: data that keeps its exact bytes (its
  // integrity hash pins them), so its size says nothing about minification; it has its own test below.
  it.each(NAMES.filter((name) => name !== 'embedScript'))(
    'minifies %s: its asset is far smaller than the same bundle unminified',
    (name) => {
      const code = javascriptFilesIn(assetDirOf(name))
        .map((file) => readFileSync(file, 'utf8').replace(/\/\/# sourceMappingURL=.*\s*$/, ''))
        .join('');
      expect(code.length).toBeLessThan(0.8 * unminifiedOf(name).length);
    },
  );

  it('minifies embedScript’s code: its own names are gone from the asset, the script it serves intact', () => {
    const code = readFileSync(join(assetDirOf('embedScript'), 'index.mjs'), 'utf8');
    const plain = unminifiedOf('embedScript');
    for (const name of ['matchesEtag', 'hostScriptResponse']) {
      expect(plain).toContain(name);
      expect(code).not.toContain(name);
    }
    expect(code).toContain('EmbedSession.mount');
  });

  // What goes into each bundle (no link of the default credential chain, the environment's provider of
  // infra/lambda-credentials.ts in its place, KMS's client only in chunks imported on first use) is
  // checked on esbuild's metafile in test/integration/bundle.test.ts, built with the same options.

  it.each(NAMES)(
    'keeps SnapStart off for %s: its credential provider reads the environment once, at init',
    (name) => {
      // infra/lambda-credentials.ts reads AWS_ACCESS_KEY_ID and the rest once, at init, and keeps
      // them (Lambda gives them no expiry). A snapshot would carry those into every environment restored
      // from it, long after they expire, and a SnapStart function is handed its credentials through the
      // container credentials endpoint, a link of the SDK's chain the bundles no longer have. Turning
      // SnapStart on means taking the credential swap out first (infra/bundling.ts).
      const fn = fnOf(name);
      expect(fn.Properties.SnapStart?.ApplyOn ?? 'None').toBe('None');
    },
  );

  it('bundles the AWS SDK into create-session instead of relying on the runtime copy', () => {
    const code = javascriptFilesIn(assetDirOf('createSession'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    expect(code).not.toMatch(/from\s*"@aws-sdk\//);
    expect(code).toContain('DynamoDB');
  });
});
