import { once } from 'node:events';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  type KeySchemaElement,
  ListTablesCommand,
  type Projection,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { unreachableReason } from '#lib/adapters/dynamodb/errors';
import type { IndexProjection, KeyDefinition, TableDefinition, TableKey } from '#lib/definitions/tables';
import { TABLE_KEYS, TABLES } from '#lib/definitions/tables';
import { closeDynaliteIteratorsOnEnd } from './dynalite-iterators';
import { type WrittenItems, watchWrites } from './dynamodb-writes';

/** A running embedded DynamoDB (dynalite). */
export interface EmbeddedDynamo {
  endpoint: string;
  port: number;
  /** Notes the items of `table` its requests write from now on, by their string partition key. */
  watchWrites(table: string, keyName: string): WrittenItems;
  close(): Promise<void>;
}

/** DATA_DIR cannot hold the embedded DynamoDB's data; the message says why, in one line. */
export class DataDirError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`DATA_DIR ${path} cannot be used: ${reason}`);
  }
}

/** The DynamoDB at `endpoint` did not answer at all. */
export class DynamoUnreachableError extends Error {
  constructor(
    readonly endpoint: string,
    readonly reason: string,
  ) {
    super(`cannot reach DynamoDB at ${endpoint}: ${reason}`);
  }
}

/**
 * Makes sure `path` is a folder this process can write, creating it when missing. dynalite's LevelDB
 * fails later and worse (an uncaught LEVEL_DATABASE_NOT_OPEN stack trace, or a hang), so it is checked
 * first and refused with the reason.
 */
export function prepareDataDir(path: string): void {
  const reason = (error: unknown) => {
    const { code, message } = error as NodeJS.ErrnoException;
    const known: Record<string, string> = {
      EACCES: 'permission denied',
      EPERM: 'operation not permitted',
      EROFS: 'read-only file system',
      ENOTDIR: 'a part of the path is a file, not a folder',
      ENOENT: 'a part of the path does not exist and cannot be created',
      ENOSPC: 'no space left on the device',
    };
    return (code && known[code]) ?? message;
  };
  try {
    makeFolders(resolve(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new DataDirError(path, 'it is a file, not a folder');
    throw new DataDirError(path, `it cannot be created (${reason(error)})`);
  }
  if (!statSync(path).isDirectory()) throw new DataDirError(path, 'it is a file, not a folder');
  const probe = join(path, `.write-check-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (error) {
    throw new DataDirError(path, `it is not writable (${reason(error)})`);
  }
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdir spins forever on some paths it cannot create
 * (under /proc, say), which is the hang this check exists to prevent.
 */
function makeFolders(path: string): void {
  const parent = dirname(path);
  if (parent !== path && !existsSync(parent)) makeFolders(parent);
  if (!existsSync(path)) mkdirSync(path);
}

/** Starts dynalite on `port` (0 = any free port), in memory or persisted under `dataDir`. */
export async function startEmbeddedDynamo(options: {
  port: number;
  host: string;
  dataDir?: string;
}): Promise<EmbeddedDynamo> {
  if (options.dataDir) prepareDataDir(options.dataDir);
  closeDynaliteIteratorsOnEnd();
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(options.dataDir ? { path: options.dataDir } : {}),
  });
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${reachableHost(options.host)}:${port}`,
    port,
    watchWrites: (table, keyName) => watchWrites(server, table, keyName),
    close: () =>
      new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/** The CreateTable request for a shared table definition. */
export function createTableInput(definition: TableDefinition, tableName: string): CreateTableCommandInput {
  const keys = [
    definition.partitionKey,
    ...(definition.sortKey ? [definition.sortKey] : []),
    ...definition.indexes.flatMap((index) => [index.partitionKey, ...(index.sortKey ? [index.sortKey] : [])]),
  ];
  const attributes = new Map(keys.map((key) => [key.name, key.type]));
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType,
    })),
    KeySchema: keySchema(definition.partitionKey, definition.sortKey),
    ...(definition.indexes.length > 0
      ? {
          GlobalSecondaryIndexes: definition.indexes.map((index) => ({
            IndexName: index.indexName,
            KeySchema: keySchema(index.partitionKey, index.sortKey),
            Projection: projection(index.projection),
          })),
        }
      : {}),
  };
}

function keySchema(partitionKey: KeyDefinition, sortKey: KeyDefinition | undefined): KeySchemaElement[] {
  return [
    { AttributeName: partitionKey.name, KeyType: 'HASH' },
    ...(sortKey ? [{ AttributeName: sortKey.name, KeyType: 'RANGE' as const }] : []),
  ];
}

function projection(value: IndexProjection): Projection {
  if (value === 'ALL' || value === 'KEYS_ONLY') return { ProjectionType: value };
  return { ProjectionType: 'INCLUDE', NonKeyAttributes: [...value.include] };
}

/**
 * Creates every missing table from the shared definitions and waits until all are ACTIVE (a DynamoDB other
 * than the embedded one, given as DYNAMODB_ENDPOINT, may take a moment and refuses writes meanwhile).
 * dynalite has no TTL sweeper; that is harmless because the service checks expiresAt itself (DynamoDB's
 * TTL deletion is only eventual anyway).
 */
export async function ensureTables(endpoint: string, names: Record<TableKey, string>): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // A host that never answers fails in seconds rather than hanging the start.
    requestHandler: { connectionTimeout: 3_000 },
  });
  try {
    let tableNames: string[] | undefined;
    try {
      tableNames = (await client.send(new ListTablesCommand({}))).TableNames;
    } catch (error) {
      // The first call to the endpoint: whatever fails here means no DynamoDB to work with at that URL.
      const reason =
        unreachableReason(error) ?? `no DynamoDB answered there (${(error as Error).name ?? 'error'})`;
      throw new DynamoUnreachableError(endpoint, reason);
    }
    const existing = new Set(tableNames ?? []);
    for (const key of TABLE_KEYS) {
      if (!existing.has(names[key]))
        await client.send(new CreateTableCommand(createTableInput(TABLES[key], names[key])));
    }
    for (const key of TABLE_KEYS) await waitUntilActive(client, names[key]);
  } finally {
    client.destroy();
  }
}

/** Polls a table until it and its indexes are ACTIVE; a DynamoDB that takes over a minute is an error. */
async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexes = Table?.GlobalSecondaryIndexes ?? [];
    if (Table?.TableStatus === 'ACTIVE' && indexes.every((index) => index.IndexStatus === 'ACTIVE')) return;
    if (Date.now() > deadline)
      throw new Error(`Table ${tableName} is still ${Table?.TableStatus} after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The host to put in URLs for a listening address: a wildcard one (0.0.0.0, ::) becomes 127.0.0.1. */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '[::]' || host === '') return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
