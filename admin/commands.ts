/**
 * Every admin command, in the order the usage text lists them. A command of its own module is one more
 * entry here (`...WEBHOOK_COMMANDS`, say).
 */
import { splitOriginList } from '#lib/domain/embed-origins';
import { SESSION_STATUSES, type SessionStatus } from '#lib/domain/session';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import {
  addMember,
  compactLegacyCutoffs,
  createApiKey,
  createBoard,
  deleteBoard,
  findSessions,
  inspectSession,
  listApiKeys,
  listBoards,
  listMembers,
  removeMember,
  revokeAllAsOperator,
  revokeApiKey,
  revokeSessionAsOperator,
  setRateLimit,
  syncRateLimits,
} from '#lib/use-cases/admin';
import { type AdminCommand, type AdminContext, UsageError } from './command';
import { importFile } from './import';
import { KEY_COMMANDS } from './keys';
import { WEBHOOK_COMMANDS } from './webhooks';

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

/** `--user` and `--board`, as given. */
function selector({ values }: AdminContext) {
  return {
    ...(values.user !== undefined ? { userId: values.user } : {}),
    ...(values.board !== undefined ? { boardId: values.board } : {}),
  };
}

const BOARD_COMMANDS: AdminCommand[] = [
  {
    name: 'create-board',
    options: ['board', 'org', 'visibility', 'name', 'embed-origins', 'app-url', 'logout-url'],
    usage: [
      'create-board --board <id> --org <orgId> --visibility <PUBLIC|PRIVATE> [--name <text>]',
      '             [--embed-origins <origin,origin,…>]   who may frame the board ("" clears)',
      '             [--app-url <url>]   the board\'s own application, handed the user ("" clears)',
      '             [--logout-url <url>]   where its application receives back-channel logouts ("" clears)',
      '             on an existing board every option left out keeps its value (--name "" clears the name)',
    ],
    run: ({ values, need, boards, local, destinations, actor }) =>
      createBoard(
        // http://127.0.0.1 and http://localhost apps only on the local runtime (a DynamoDB endpoint); a
        // logout URL, which the service itself POSTs to, on loopback only with WEBHOOK_ALLOW_LOOPBACK=1.
        {
          boards: boards(),
          appUrlRule: { allowLoopbackHttp: local },
          destinations,
          actor,
          clock: systemClock,
        },
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
          ...(values['logout-url'] !== undefined ? { logoutUrl: values['logout-url'].trim() } : {}),
        },
      ),
  },
  {
    name: 'delete-board',
    options: ['org', 'board'],
    usage: ["delete-board --org <orgId> --board <id>             ends the board's sessions, then deletes it"],
    run: ({ need, boards, sessions, actor }) =>
      deleteBoard({ ...sessions(), boards: boards(), actor }, need('org'), need('board')),
  },
  {
    name: 'list-boards',
    options: ['org'],
    usage: ['list-boards [--org <orgId>]'],
    run: async ({ values, boards }) => ({ boards: await listBoards({ boards: boards() }, values.org) }),
  },
  {
    name: 'add-member',
    options: ['org', 'user'],
    usage: ['add-member --org <orgId> --user <userId>'],
    run: ({ need, memberships, actor }) =>
      addMember({ memberships: memberships(), clock: systemClock, actor }, need('org'), need('user')),
  },
  {
    name: 'list-members',
    options: ['org'],
    usage: ['list-members --org <orgId>'],
    run: ({ need, memberships }) => listMembers({ memberships: memberships() }, need('org')),
  },
  {
    name: 'remove-member',
    options: ['org', 'user'],
    flags: ['end-sessions'],
    usage: [
      'remove-member --org <orgId> --user <userId> [--end-sessions]',
      '                                                   --end-sessions: also end the sessions the member',
      "                                                   created on the organization's boards",
    ],
    run: ({ values, need, memberships, sessions }) =>
      removeMember(
        { memberships: memberships(), ...(values['end-sessions'] ? sessions() : {}) },
        need('org'),
        need('user'),
        { endSessions: values['end-sessions'] === 'true' },
      ),
  },
  {
    name: 'import',
    options: ['from-line'],
    positional: 'file',
    usage: [
      'import <file.jsonl> [--from-line <n>]                boards and memberships, one JSON object a line;',
      '                                                   idempotent: run it again to resume or converge',
    ],
    run: ({ values, need, boards, memberships, local, actor }) =>
      importFile(
        {
          boards: boards(),
          memberships: memberships(),
          appUrlRule: { allowLoopbackHttp: local },
          actor,
          clock: systemClock,
        },
        need('file'),
        values['from-line'] !== undefined ? lineOption(values['from-line']) : 1,
      ),
  },
];

function lineOption(value: string): number {
  if (!/^[1-9]\d{0,8}$/.test(value)) throw new UsageError('--from-line must be a positive integer');
  return Number(value);
}

const API_KEY_COMMANDS: AdminCommand[] = [
  {
    name: 'create-api-key',
    options: ['user', 'name', 'expires-in-days'],
    usage: [
      'create-api-key --user <userId> [--name <label>] [--expires-in-days <n>]',
      '                                                   prints the key once; refused after its expiry',
    ],
    run: ({ values, need, apiKeys, throttling, actor }) =>
      createApiKey(
        { apiKeys: apiKeys(), throttling: throttling(), clock: systemClock, random: cryptoRandom, actor },
        need('user'),
        values.name ?? null,
        values['expires-in-days'] !== undefined
          ? { expiresInDays: countOption(values['expires-in-days']) }
          : {},
      ),
  },
  {
    name: 'revoke-api-key',
    options: ['key-id'],
    flags: ['end-sessions'],
    usage: [
      'revoke-api-key --key-id <keyId> [--end-sessions]   --end-sessions: also end every session the key created',
    ],
    run: ({ values, need, apiKeys, throttling, sessions, actor }) =>
      revokeApiKey(
        {
          apiKeys: apiKeys(),
          throttling: throttling(),
          clock: systemClock,
          actor,
          ...(values['end-sessions'] ? { cutoffs: sessions().cutoffs, random: cryptoRandom } : {}),
        },
        need('key-id'),
        { endSessions: values['end-sessions'] === 'true' },
      ),
  },
  {
    name: 'set-rate-limit',
    options: ['key-id', 'rate', 'burst'],
    usage: [
      "set-rate-limit --key-id <keyId> --rate <n> --burst <n>   the key's own limit (requests/s, burst)",
    ],
    run: ({ need, apiKeys, throttling }) =>
      setRateLimit({ apiKeys: apiKeys(), throttling: throttling() }, need('key-id'), {
        rate: countOption(need('rate')),
        burst: countOption(need('burst')),
      }),
  },
  {
    name: 'clear-rate-limit',
    options: ['key-id'],
    usage: ['clear-rate-limit --key-id <keyId>                  back to the default limit'],
    run: ({ need, apiKeys, throttling }) =>
      setRateLimit({ apiKeys: apiKeys(), throttling: throttling() }, need('key-id'), null),
  },
  {
    name: 'sync-rate-limits',
    options: [],
    usage: ['sync-rate-limits                                   API Gateway in step with every key (AWS)'],
    run: ({ apiKeys, throttling }) =>
      syncRateLimits({ apiKeys: apiKeys(), throttling: throttling(), clock: systemClock }),
  },
  {
    name: 'list-api-keys',
    options: ['user'],
    usage: ['list-api-keys [--user <userId>]                    never prints keys'],
    run: async ({ values, apiKeys }) => ({ apiKeys: await listApiKeys({ apiKeys: apiKeys() }, values.user) }),
  },
];

const SESSION_COMMANDS: AdminCommand[] = [
  {
    name: 'get-session',
    options: ['id'],
    usage: ['get-session --id <sessionId>                        never prints tokens or hashes'],
    run: ({ need, sessions }) => inspectSession(sessions(), need('id')),
  },
  {
    name: 'list-sessions',
    options: ['user', 'board', 'status', 'limit'],
    usage: [
      'list-sessions (--user <userId> | --board <id>) [--status <active|expired|revoked>] [--limit <n>]',
    ],
    run: async (context) => {
      const { values, sessions } = context;
      if (!values.user && !values.board) throw new UsageError('list-sessions needs --user or --board');
      return {
        sessions: await findSessions(sessions(), {
          ...selector(context),
          ...(values.status !== undefined ? { status: statusOption(values.status) } : {}),
          ...(values.limit !== undefined ? { limit: limitOption(values.limit) } : {}),
        }),
      };
    },
  },
  {
    name: 'revoke-session',
    options: ['id'],
    usage: ['revoke-session --id <sessionId>'],
    run: ({ need, sessions }) => revokeSessionAsOperator(sessions(), need('id')),
  },
  {
    name: 'revoke-all-sessions',
    options: ['before', 'board', 'user'],
    usage: [
      'revoke-all-sessions --before <ISO time> [--board <id> | --user <userId>]',
      "                                                   one cut-off: the stage's (or a board's, or an",
      "                                                   external user id's in every tenant) sessions",
      '                                                   created at or before that time are revoked',
    ],
    run: (context) =>
      revokeAllAsOperator(context.sessions(), { ...selector(context), before: context.need('before') }),
  },
  {
    name: 'compact-cutoffs',
    options: [],
    usage: [
      'compact-cutoffs                                    once after upgrading: bounds the cut-off records',
      '                                                   written before they were per tenant, and gives',
      '                                                   each the expiry of the sessions it covers',
    ],
    run: ({ sessions }) => compactLegacyCutoffs(sessions()),
  },
];

export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  ...BOARD_COMMANDS,
  ...API_KEY_COMMANDS,
  ...SESSION_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...KEY_COMMANDS,
];
