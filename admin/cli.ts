/**
 * Operator CLI: `npm run --silent admin -- <command> [options]`. Prints exactly one JSON document on
 * stdout; errors go to stderr with a non-zero exit. Works against the local runtime
 * (DYNAMODB_ENDPOINT=http://127.0.0.1:8000) and against the deployed tables (names from the environment).
 */
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { LOCAL_TABLE_NAMES, TABLE_KEYS, TABLES, type TableKey } from '#lib/definitions/tables';
import type { KeyThrottling } from '#lib/domain/ports';
import { DynamoApiKeyRepository } from '#lib/dynamodb/api-keys';
import { DynamoBoardRepository } from '#lib/dynamodb/boards';
import { createDocumentClient } from '#lib/dynamodb/client';
import { unreachableReason } from '#lib/dynamodb/errors';
import { DynamoMembershipRepository } from '#lib/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { readDynamo } from '#lib/platform/config';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { RECORD_ONLY_THROTTLING } from '#lib/use-cases/admin';
import { type AdminCommand, type AdminContext, UsageError } from './command';
import { ADMIN_COMMANDS } from './commands';
import { ApiGatewayKeyThrottling } from './usage-plans';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** The usage text: every command's usage lines, from the table of commands, then the environment. */
export function usageText(commands: readonly AdminCommand[] = ADMIN_COMMANDS): string {
  return `Usage: npm run --silent admin -- <command> [options]

${commands.flatMap((command) => command.usage.map((line) => `  ${line}`)).join('\n')}

Operators are not scoped to a tenant: session commands see every organization's sessions.
list-sessions --user scans the sessions table (fine for an operator, never on a request path).

Environment: DYNAMODB_ENDPOINT (local runtime), AWS_REGION, and the table names
${TABLE_KEYS.map((k) => `${TABLES[k].envVar} (locally, default ${LOCAL_TABLE_NAMES[k]})`).join(', ')};
against AWS (no DYNAMODB_ENDPOINT) the table names are required, from the stack outputs, and the API key
commands also need USAGE_PLAN_ID (the UsagePlanId output) to keep API Gateway's usage plans in step.`;
}

/** The command's own options, as given; any other option is a usage error. */
function parseOptions(command: AdminCommand, args: string[]): Record<string, string | undefined> {
  try {
    const { values } = parseArgs({
      args,
      options: Object.fromEntries(command.options.map((option) => [option, { type: 'string' as const }])),
      strict: true,
    });
    return values as Record<string, string | undefined>;
  } catch (error) {
    throw new UsageError(`${command.name}: ${(error as Error).message}`);
  }
}

/** Runs one admin command and returns the JSON document to print. */
export async function runAdmin(
  argv: string[],
  env: Record<string, string | undefined>,
  commands: readonly AdminCommand[] = ADMIN_COMMANDS,
): Promise<unknown> {
  const [name, ...rest] = argv;
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) throw new UsageError(name ? `Unknown command "${name}"` : 'No command given');
  const values = parseOptions(command, rest);

  const problems: string[] = [];
  const dynamo = readDynamo(env, problems);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  const local = dynamo.endpoint !== undefined;
  // The local runtime's table names are defaults only against a local endpoint: in an AWS account they
  // could name some other table, so there every table the command uses must be named explicitly.
  const table = (key: TableKey): string => {
    const tableName = env[TABLES[key].envVar]?.trim();
    if (tableName) return tableName;
    if (local) return LOCAL_TABLE_NAMES[key];
    throw new UsageError(
      `${TABLES[key].envVar} is required against AWS (the table name from the stack outputs); ` +
        'the local defaults apply only with DYNAMODB_ENDPOINT',
    );
  };
  const db = createDocumentClient(dynamo);
  let apiGateway: APIGatewayClient | undefined;
  // Against the local runtime the key record is all there is: the local gateway reads its limits through
  // the authorizer. Against AWS, API Gateway's usage plans must follow every change of a key.
  const throttling = (): KeyThrottling => {
    if (local) return RECORD_ONLY_THROTTLING;
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
  const context: AdminContext = {
    values,
    need: (option) => {
      const value = values[option];
      if (value === undefined || value === '') throw new UsageError(`${command.name} needs --${option}`);
      return value;
    },
    local,
    db,
    table,
    boards: () => new DynamoBoardRepository(db, table('boards')),
    memberships: () => new DynamoMembershipRepository(db, table('memberships')),
    apiKeys: () => new DynamoApiKeyRepository(db, table('apiKeys')),
    sessions: () => ({
      sessions: new DynamoSessionRepository(db, table('sessions')),
      clock: systemClock,
      random: cryptoRandom,
    }),
    throttling,
  };

  try {
    return await command.run(context);
  } finally {
    db.destroy();
    apiGateway?.destroy();
  }
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
    process.stderr.write(`error: ${message}\n${error instanceof UsageError ? `\n${usageText()}\n` : ''}`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
