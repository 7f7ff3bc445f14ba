/**
 * Operator CLI: `npm run --silent admin -- <command> [options]`. Prints exactly one JSON document on
 * stdout; errors go to stderr with a non-zero exit. Works against the local runtime
 * (DYNAMODB_ENDPOINT=http://127.0.0.1:8000) and against the deployed tables (names from the environment).
 */
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { LOCAL_TABLE_NAMES, TABLE_KEYS, TABLES, type TableKey } from '#lib/definitions/tables';
import { splitOriginList } from '#lib/domain/embed-origins';
import type { KeyThrottling } from '#lib/domain/ports';
import { SESSION_STATUSES, type SessionStatus } from '#lib/domain/session';
import { DynamoApiKeyRepository } from '#lib/dynamodb/api-keys';
import { DynamoBoardRepository } from '#lib/dynamodb/boards';
import { createDocumentClient } from '#lib/dynamodb/client';
import { unreachableReason } from '#lib/dynamodb/errors';
import { DynamoMembershipRepository } from '#lib/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { DynamoWebhookRepository } from '#lib/dynamodb/webhooks';
import { readDynamo } from '#lib/platform/config';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import {
  addMember,
  createApiKey,
  createBoard,
  listApiKeys,
  listBoards,
  RECORD_ONLY_THROTTLING,
  removeMember,
  revokeApiKey,
  setRateLimit,
  syncRateLimits,
} from '#lib/use-cases/admin';
import {
  findSessions,
  inspectSession,
  revokeAllAsOperator,
  revokeSessionAsOperator,
} from '#lib/use-cases/operate-sessions';
import { ApiGatewayKeyThrottling } from './usage-plans';
import { deleteWebhookAsOperator, listen, listWebhooksAsOperator } from './webhooks';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `Usage: npm run --silent admin -- <command> [options]

  create-board --board <id> --org <orgId> --visibility <PUBLIC|PRIVATE> [--name <text>]
               [--embed-origins <origin,origin,…>]   who may frame the board ("" clears)
               [--app-url <url>]   the board's own application, handed the user ("" clears)
               on an existing board every option left out keeps its value (--name "" clears the name)
  add-member --org <orgId> --user <userId>
  remove-member --org <orgId> --user <userId>
  create-api-key --user <userId> [--name <label>]    prints the key once
  revoke-api-key --key-id <keyId>
  set-rate-limit --key-id <keyId> --rate <n> --burst <n>   the key's own limit (requests/s, burst)
  clear-rate-limit --key-id <keyId>                  back to the default limit
  sync-rate-limits                                   API Gateway in step with every key (AWS)
  list-boards
  list-api-keys [--user <userId>]                    never prints keys
  get-session --id <sessionId>                        never prints tokens or hashes
  list-sessions (--user <userId> | --board <id>) [--status <active|expired|revoked>] [--limit <n>]
  revoke-session --id <sessionId>
  revoke-all-sessions --before <ISO time> [--board <id> | --user <userId>]
                                                     one cut-off: the stage's (or a board's, or an
                                                     external user id's in every tenant) sessions
                                                     created at or before that time are revoked
  list-webhooks [--user <userId>]                    never prints secrets (none is stored)
  delete-webhook --user <userId> --id <webhookId>
  listen --forward-to <url> --api-key <key> [--base-url <url>] [--events <type,type,…>]
                                                     forwards the key owner's session events (signed,
                                                     secret printed once) until Ctrl-C

Operators are not scoped to a tenant: session commands see every organization's sessions.
list-sessions --user scans the sessions table (fine for an operator, never on a request path).

Environment: DYNAMODB_ENDPOINT (local runtime), AWS_REGION, and the table names
${TABLE_KEYS.map((k) => `${TABLES[k].envVar} (locally, default ${LOCAL_TABLE_NAMES[k]})`).join(', ')};
against AWS (no DYNAMODB_ENDPOINT) the table names are required, from the stack outputs, and the API key
commands also need USAGE_PLAN_ID (the UsagePlanId output) to keep API Gateway's usage plans in step.`;

/** A usage mistake: printed with the usage text. */
class UsageError extends Error {}

function statusOption(value: string): SessionStatus {
  if (!(SESSION_STATUSES as readonly string[]).includes(value)) {
    throw new UsageError(`--status must be one of ${SESSION_STATUSES.join(', ')}`);
  }
  return value as SessionStatus;
}

function limitOption(value: string): number {
  if (!/^[1-9]\d{0,5}$/.test(value)) throw new UsageError('--limit must be a positive integer');
  return Number(value);
}

/** A whole number as typed; anything else becomes NaN, which the use case refuses with its range. */
function countOption(value: string): number {
  return /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
}

function parseOptions(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        board: { type: 'string' },
        org: { type: 'string' },
        visibility: { type: 'string' },
        name: { type: 'string' },
        user: { type: 'string' },
        'key-id': { type: 'string' },
        id: { type: 'string' },
        status: { type: 'string' },
        limit: { type: 'string' },
        rate: { type: 'string' },
        burst: { type: 'string' },
        'embed-origins': { type: 'string' },
        'app-url': { type: 'string' },
        before: { type: 'string' },
        'forward-to': { type: 'string' },
        'api-key': { type: 'string' },
        'base-url': { type: 'string' },
        events: { type: 'string' },
      },
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Runs one admin command and returns the JSON document to print. */
export async function runAdmin(argv: string[], env: Record<string, string | undefined>): Promise<unknown> {
  const [command, ...rest] = argv;
  const { values } = parseOptions(rest);
  const need = (option: keyof typeof values): string => {
    const value = values[option];
    if (typeof value !== 'string' || value === '') throw new UsageError(`${command} needs --${option}`);
    return value;
  };

  const problems: string[] = [];
  const dynamo = readDynamo(env, problems);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  // The local runtime's table names are defaults only against a local endpoint: in an AWS account they
  // could name some other table, so there every table the command uses must be named explicitly.
  const table = (key: TableKey): string => {
    const name = env[TABLES[key].envVar]?.trim();
    if (name) return name;
    if (dynamo.endpoint) return LOCAL_TABLE_NAMES[key];
    throw new UsageError(
      `${TABLES[key].envVar} is required against AWS (the table name from the stack outputs); ` +
        'the local defaults apply only with DYNAMODB_ENDPOINT',
    );
  };
  const tables = {
    boards: () => table('boards'),
    memberships: () => table('memberships'),
    apiKeys: () => table('apiKeys'),
    sessions: () => table('sessions'),
  };
  const db = createDocumentClient(dynamo);
  let apiGateway: APIGatewayClient | undefined;
  // Against the local runtime the key record is all there is: the local gateway reads its limits through
  // the authorizer. Against AWS, API Gateway's usage plans must follow every change of a key.
  const throttling = (): KeyThrottling => {
    if (dynamo.endpoint) return RECORD_ONLY_THROTTLING;
    const usagePlanId = env.USAGE_PLAN_ID?.trim();
    if (!usagePlanId) {
      throw new UsageError(
        'USAGE_PLAN_ID is required against AWS (the UsagePlanId stack output): API Gateway refuses every ' +
          'key that is not in a usage plan of the stage',
      );
    }
    // Adaptive retries pace a long sync-rate-limits under API Gateway's control-plane rate limits.
    apiGateway ??= new APIGatewayClient({ region: dynamo.region, maxAttempts: 6, retryMode: 'adaptive' });
    return new ApiGatewayKeyThrottling(apiGateway, usagePlanId);
  };
  const boards = () => new DynamoBoardRepository(db, tables.boards());
  const memberships = () => new DynamoMembershipRepository(db, tables.memberships());
  const apiKeys = () => new DynamoApiKeyRepository(db, tables.apiKeys());
  const sessions = () => ({
    sessions: new DynamoSessionRepository(db, tables.sessions()),
    clock: systemClock,
    random: cryptoRandom,
  });
  const webhooks = () => new DynamoWebhookRepository(db, table('webhooks'));
  const selector = () => ({
    ...(values.user !== undefined ? { userId: values.user } : {}),
    ...(values.board !== undefined ? { boardId: values.board } : {}),
  });

  try {
    switch (command) {
      case 'create-board':
        return await createBoard(
          // http://127.0.0.1 and http://localhost apps only on the local runtime (a DynamoDB endpoint).
          { boards: boards(), appUrlRule: { allowLoopbackHttp: dynamo.endpoint !== undefined } },
          {
            boardId: need('board'),
            // Left out, each keeps the existing board's value (org and visibility are needed for a new one).
            ...(values.org !== undefined ? { orgId: values.org } : {}),
            ...(values.visibility !== undefined ? { visibility: values.visibility } : {}),
            ...(values.name !== undefined ? { name: values.name === '' ? null : values.name } : {}),
            ...(values['embed-origins'] !== undefined
              ? { embedOrigins: splitOriginList(values['embed-origins']) }
              : {}),
            ...(values['app-url'] !== undefined ? { appUrl: values['app-url'].trim() } : {}),
          },
        );
      case 'add-member':
        return await addMember({ memberships: memberships(), clock: systemClock }, need('org'), need('user'));
      case 'remove-member':
        return await removeMember({ memberships: memberships() }, need('org'), need('user'));
      case 'create-api-key':
        return await createApiKey(
          { apiKeys: apiKeys(), throttling: throttling(), clock: systemClock, random: cryptoRandom },
          need('user'),
          values.name ?? null,
        );
      case 'revoke-api-key':
        return await revokeApiKey(
          { apiKeys: apiKeys(), throttling: throttling(), clock: systemClock },
          need('key-id'),
        );
      case 'set-rate-limit':
        return await setRateLimit({ apiKeys: apiKeys(), throttling: throttling() }, need('key-id'), {
          rate: countOption(need('rate')),
          burst: countOption(need('burst')),
        });
      case 'clear-rate-limit':
        return await setRateLimit({ apiKeys: apiKeys(), throttling: throttling() }, need('key-id'), null);
      case 'sync-rate-limits':
        return await syncRateLimits({ apiKeys: apiKeys(), throttling: throttling() });
      case 'list-boards':
        return { boards: await listBoards({ boards: boards() }) };
      case 'list-api-keys':
        return { apiKeys: await listApiKeys({ apiKeys: apiKeys() }, values.user) };
      case 'get-session':
        return await inspectSession(sessions(), need('id'));
      case 'list-sessions':
        if (!values.user && !values.board) throw new UsageError('list-sessions needs --user or --board');
        return {
          sessions: await findSessions(sessions(), {
            ...selector(),
            ...(values.status !== undefined ? { status: statusOption(values.status) } : {}),
            ...(values.limit !== undefined ? { limit: limitOption(values.limit) } : {}),
          }),
        };
      case 'revoke-session':
        return await revokeSessionAsOperator(sessions(), need('id'));
      case 'revoke-all-sessions':
        return await revokeAllAsOperator(sessions(), { ...selector(), before: need('before') });
      case 'list-webhooks':
        return { webhooks: await listWebhooksAsOperator(webhooks(), values.user) };
      case 'delete-webhook':
        return await deleteWebhookAsOperator(webhooks(), need('user'), need('id'));
      case 'listen':
        return await listen(
          {
            baseUrl: values['base-url'] ?? 'http://127.0.0.1:3000',
            apiKey: need('api-key'),
            forwardTo: need('forward-to'),
            ...(values.events ? { events: values.events.split(',').map((type) => type.trim()) } : {}),
          },
          { print: (line) => process.stderr.write(`${line}\n`), until: interrupted() },
        );
      default:
        throw new UsageError(command ? `Unknown command "${command}"` : 'No command given');
    }
  } finally {
    db.destroy();
    apiGateway?.destroy();
  }
}

/** Aborts on the first Ctrl-C (SIGINT) or SIGTERM. */
function interrupted(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return controller.signal;
}

/**
 * The line the CLI prints for a failure: a DynamoDB that cannot be reached is named with its URL (or its
 * region, against AWS), not reported as a passing outage.
 */
export function adminErrorMessage(error: unknown, env: Record<string, string | undefined>): string {
  const reason = unreachableReason(error);
  if (reason) {
    const endpoint = env.DYNAMODB_ENDPOINT?.trim();
    return endpoint
      ? `cannot reach DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT): ${reason}. Is the local runtime (npm start) or that DynamoDB running?`
      : `cannot reach DynamoDB in ${env.AWS_REGION ?? 'the configured region'}: ${reason}`;
  }
  return error instanceof Error ? error.message : String(error);
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  try {
    process.stdout.write(`${JSON.stringify(await runAdmin(process.argv.slice(2), process.env), null, 2)}\n`);
  } catch (error) {
    const message = adminErrorMessage(error, process.env);
    process.stderr.write(`error: ${message}\n${error instanceof UsageError ? `\n${USAGE}\n` : ''}`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
