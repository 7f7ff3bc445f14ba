/**
 * Operator CLI: `npm run --silent admin -- <command> [options]`. Prints exactly one JSON document on
 * stdout; errors go to stderr with a non-zero exit. Works against the local runtime
 * (DYNAMODB_ENDPOINT=http://127.0.0.1:8000) and against the deployed tables (names from the environment).
 */
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { UsagePlanKeys } from '#lib/adapters/api-gateway/api-gateway-keys';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoCutoffRecords } from '#lib/adapters/dynamodb/cutoff-records';
import { unreachableReason } from '#lib/adapters/dynamodb/errors';
import { DynamoMembershipRepository } from '#lib/adapters/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { LOCAL_TABLE_NAMES, TABLE_KEYS, TABLES, type TableKey } from '#lib/definitions/tables';
import { cliOperator } from '#lib/domain/operators';
import type { KeyThrottling } from '#lib/domain/ports';
import { type AwsCallLimits, awsClientSettings, withCallPolicy } from '#lib/platform/aws-clients';
import { readDestinationPolicy, readDynamo } from '#lib/platform/config';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { RECORD_ONLY_THROTTLING } from '#lib/use-cases/admin';
import { type AdminCommand, type AdminContext, UsageError } from './command';
import { ADMIN_COMMANDS } from './commands';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * The call policy's limits for the CLI's API Gateway calls: an operator's command may wait longer than a
 * request may, and API Gateway's control plane throttles a long sync-rate-limits (a few calls per second),
 * so more attempts (paced by adaptive retries) and longer attempts than the functions'; still, an attempt
 * that hangs is given up rather than waited on for ever.
 */
export const ADMIN_API_GATEWAY_LIMITS: AwsCallLimits = {
  connectionTimeoutMs: 3_000,
  requestTimeoutMs: 10_000,
  maxAttempts: 6,
};

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

/**
 * The arguments with each option's value joined to its name (`--kid=-Ab…`), so that an option takes the
 * argument after it whatever that starts with: key ids and secrets are base64url, and one in 64 starts
 * with "-", which parseArgs alone refuses as ambiguous.
 */
function valuesJoined(args: readonly string[], options: ReadonlySet<string>): string[] {
  const joined: string[] = [];
  for (let at = 0; at < args.length; at++) {
    const arg = args[at] as string;
    const value = args[at + 1];
    if (arg === '--') return [...joined, ...args.slice(at)];
    if (arg.startsWith('--') && options.has(arg.slice(2)) && value !== undefined) {
      joined.push(`${arg}=${value}`);
      at++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** The command's own options, as given; any other option is a usage error. */
function parseOptions(command: AdminCommand, args: string[]): Record<string, string | undefined> {
  try {
    const { values, positionals } = parseArgs({
      args: valuesJoined(args, new Set(command.options)),
      options: {
        ...Object.fromEntries(command.options.map((option) => [option, { type: 'string' as const }])),
        ...Object.fromEntries((command.flags ?? []).map((flag) => [flag, { type: 'boolean' as const }])),
      },
      strict: true,
      allowPositionals: command.positional !== undefined,
    });
    if (command.positional !== undefined && positionals.length > 1)
      throw new UsageError(`${command.name} takes one ${command.positional}`);
    return Object.fromEntries([
      ...Object.entries(values).map(([name, value]) => [name, value === true ? 'true' : value]),
      ...(command.positional !== undefined && positionals[0] !== undefined
        ? [[command.positional, positionals[0]]]
        : []),
    ]) as Record<string, string | undefined>;
  } catch (error) {
    throw new UsageError(`${command.name}: ${(error as Error).message}`);
  }
}

/** What asks for the usage text rather than a command. */
const HELP = new Set(['help', '--help', '-h']);

/** The hint under a usage error: one line, instead of the whole usage text. */
export const USAGE_HINT = 'Run `npm run --silent admin -- help` for the commands and their options.';

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
  const need = (option: string) => {
    const value = values[option];
    if (value === undefined || value === '') throw new UsageError(`${command.name} needs --${option}`);
    return value;
  };
  if (command.storage === false) return command.run(httpOnlyContext(values, need));

  const problems: string[] = [];
  const dynamo = readDynamo(env, problems);
  const destinations = readDestinationPolicy(env, problems);
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
    apiGateway ??= withCallPolicy(
      new APIGatewayClient({
        ...awsClientSettings({ region: dynamo.region }, ADMIN_API_GATEWAY_LIMITS),
        // Adaptive retries pace a long sync-rate-limits under API Gateway's control-plane rate limits.
        retryMode: 'adaptive',
      }),
      ADMIN_API_GATEWAY_LIMITS,
    );
    return new UsagePlanKeys(apiGateway, { id: usagePlanId });
  };
  const actor = cliOperator(env.USER ?? env.LOGNAME ?? safeUserName());
  const context: AdminContext = {
    values,
    need,
    env,
    local,
    destinations,
    actor,
    db,
    table,
    boards: () => new DynamoBoardRepository(db, table('boards')),
    memberships: () => new DynamoMembershipRepository(db, table('memberships')),
    apiKeys: () => new DynamoApiKeyRepository(db, table('apiKeys')),
    sessions: () => ({
      sessions: new DynamoSessionRepository(db, table('sessions')),
      cutoffs: new DynamoCutoffRecords(db, table('sessions')),
      clock: systemClock,
      random: cryptoRandom,
      actor,
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

/** The context of a command that talks only HTTP: asking it for storage is a bug of the command. */
function httpOnlyContext(values: AdminContext['values'], need: AdminContext['need']): AdminContext {
  const none = (): never => {
    throw new Error('this command declares it uses no storage');
  };
  return {
    values,
    need,
    env: {},
    local: true,
    actor: cliOperator(safeUserName()),
    get db() {
      return none();
    },
    get destinations() {
      return none();
    },
    table: none,
    boards: none,
    memberships: none,
    apiKeys: none,
    sessions: none,
    throttling: none,
  };
}

/** The operating system's name of the user running the CLI; `unknown` where it has none. */
function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
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

/** Where the CLI writes. */
export interface AdminIo {
  out(text: string): void;
  err(text: string): void;
}

/**
 * The CLI: `help` (or `--help`, `-h`) prints the usage text and exits 0; a command prints its one JSON
 * document; a usage mistake prints one line and the hint (exit 2), any other failure one line (exit 1).
 */
export async function main(
  argv: string[],
  env: Record<string, string | undefined>,
  io: AdminIo,
  commands: readonly AdminCommand[] = ADMIN_COMMANDS,
): Promise<number> {
  if (argv[0] !== undefined && HELP.has(argv[0])) {
    io.out(`${usageText(commands)}\n`);
    return 0;
  }
  try {
    io.out(`${JSON.stringify(await runAdmin(argv, env, commands), null, 2)}\n`);
    return 0;
  } catch (error) {
    io.err(`error: ${adminErrorMessage(error, env)}\n`);
    if (error instanceof UsageError) {
      io.err(`${USAGE_HINT}\n`);
      return 2;
    }
    return 1;
  }
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  process.exitCode = await main(process.argv.slice(2), process.env, {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
}
