/**
 * What an admin command is: a name, its options, its usage lines and what it runs. `admin/commands.ts`
 * lists them; `admin/cli.ts` parses a command's own options, builds what it asks for from the
 * environment and prints its usage from the same list, so adding a command is adding one entry.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import type { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import type { DynamoMembershipRepository } from '#lib/adapters/dynamodb/memberships';
import type { TableKey } from '#lib/definitions/tables';
import type { DestinationPolicy } from '#lib/domain/destinations';
import type { KeyThrottling } from '#lib/domain/ports';
import type { OperateSessionsDeps } from '#lib/use-cases/admin';

/** A usage mistake: the CLI prints it with the usage text and exits 2. */
export class UsageError extends Error {}

export interface AdminContext {
  /** The command's options as given; an option left out is absent. */
  values: Readonly<Record<string, string | undefined>>;
  /** A required option's value; a `UsageError` naming it when it is missing or empty. */
  need(option: string): string;
  /** The CLI's environment (AWS_REGION, ID_TOKEN_KEYRING_KEY, ...), for a command that reads a setting. */
  env: Readonly<Record<string, string | undefined>>;
  /** True against a DynamoDB endpoint (the local runtime), false against AWS. */
  local: boolean;
  /**
   * Where the service may POST for a board (its logout URL): public internet hosts; loopback too against
   * the local runtime with WEBHOOK_ALLOW_LOOPBACK=1, as the runtime itself is started.
   */
  destinations: DestinationPolicy;
  /** Who runs the command, recorded on what it changes: `cli:<user>` (lib/domain/operators.ts). */
  actor: string;
  /** The document client, for a command whose adapters are not below (it is closed after the command). */
  db: DynamoDBDocumentClient;
  /** A table's name: from its variable, or locally its default; a `UsageError` against AWS without one. */
  table(key: TableKey): string;
  boards(): DynamoBoardRepository;
  memberships(): DynamoMembershipRepository;
  apiKeys(): DynamoApiKeyRepository;
  /** What the operator session use cases take: the sessions table, the clock and randomness. */
  sessions(): OperateSessionsDeps;
  /** Where a key's limits live besides its record: API Gateway's usage plans against AWS. */
  throttling(): KeyThrottling;
}

export interface AdminCommand {
  name: string;
  /** Its options, each a string (`--name <value>`); any other option is a usage error. */
  options: readonly string[];
  /** Its flags (`--name`, no value): present in `values` as `'true'` when given. */
  flags?: readonly string[];
  /** The name of its one positional argument (`import FILE`), in `values` under that name. */
  positional?: string;
  /** Its lines of the usage text, the first starting with the name; later lines indented as printed. */
  usage: readonly string[];
  /**
   * `false` for a command that only talks HTTP to a running service (`listen`): the CLI then reads no
   * DynamoDB setting and opens no client for it.
   */
  storage?: false;
  /** Runs it and returns the one JSON document the CLI prints. */
  run(context: AdminContext): Promise<unknown>;
}
