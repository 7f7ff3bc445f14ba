import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DELIVERY_QUEUE_SOURCE } from '#lib/definitions/background';
import { TABLES } from '#lib/definitions/tables';
import { SCOPE_WRITE_SHARDS } from '#lib/dynamodb/sessions';
import { FAN_OUT_PAGE_SIZE, LOGOUTS_PER_PART_PER_SECOND } from '#lib/logout/fan-out';
import { SQS_BATCH_MAX } from '#lib/webhooks/sqs';

/**
 * The capacity arithmetic of docs/scale.md, recomputed: a figure on the page that no longer follows from
 * its inputs (or an input that changed under it, such as the number of session indexes) fails here.
 */
const PAGE = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'scale.md'), 'utf8');

/** Inputs, as the page states them. */
const PARTITION_WRU = 1_000;
const PARTITION_RRU = 3_000;
const TABLE_WRU_QUOTA = 40_000;
const LAMBDA_CONCURRENCY_QUOTA = 1_000;
const API_GATEWAY_ACCOUNT_RPS = 10_000;
const HOT_BOARD_CREATES = 10_000;
const CREATE_SECONDS = 0.06;
const EMBED_SECONDS = 0.04;
const LAMBDA_GB = 0.5;
const PRICE = {
  apiPerMillion: 3.5,
  lambdaRequestsPerMillion: 0.2,
  lambdaGbSecond: 0.0000133334,
  wruPerMillion: 0.625,
  rruPerMillion: 0.125,
  logsPerGb: 0.5,
  storageGbMonth: 0.25,
};

const usd = (value: number) => `$${value.toFixed(2)}`;
const thousands = (value: number) => value.toLocaleString('en-US');

/** Writes of one create: the table and every index of the sessions table, each at most 1 KB. */
const createWrites = 1 + TABLES.sessions.indexes.length;
/**
 * Reads of a create (board, eventual; the key owner's membership, consistent, which decides the tenant)
 * and of an embed load (the session by its key, consistent; board).
 */
const createReads = 0.5 + 1;
const embedReads = 1 + 0.5;

describe('docs/scale.md: per request', () => {
  it('counts the writes of a create from the sessions table’s indexes', () => {
    expect(createWrites).toBe(6);
    expect(PAGE).toContain(`table + ${TABLES.sessions.indexes.length} indexes = **${createWrites} WRU**`);
    expect(PAGE).toContain(`**${embedReads} RRU**`);
  });
});

describe('docs/scale.md: cost per million sessions', () => {
  it('adds up, each line from its unit price', () => {
    const lines = {
      api: 2 * PRICE.apiPerMillion,
      lambdaRequests: 2 * PRICE.lambdaRequestsPerMillion,
      lambdaCompute: 1e6 * LAMBDA_GB * (CREATE_SECONDS + EMBED_SECONDS) * PRICE.lambdaGbSecond,
      writes: createWrites * PRICE.wruPerMillion,
      reads: (createReads + embedReads) * PRICE.rruPerMillion,
      // About 1 KB per request, two requests per session: 2 GB.
      logs: ((2 * 1e6 * 1_000) / 1e9) * PRICE.logsPerGb,
    };
    const rounded = Object.values(lines).map((value) => Number(value.toFixed(2)));
    expect(rounded).toEqual([7, 0.4, 0.67, 3.75, 0.38, 1]);
    for (const value of rounded) expect(PAGE).toContain(usd(value));
    const total = rounded.reduce((sum, value) => sum + value, 0);
    expect(PAGE).toContain(`**${usd(total)}**`);
    expect(PAGE).toContain(usd(3 * PRICE.storageGbMonth));
  });
});

describe('docs/scale.md: one board at 10,000 creates a second', () => {
  it('shows that one unsharded board index throttles at a partition’s write limit', () => {
    expect(PAGE).toContain(`throttles at **${thousands(PARTITION_WRU)} creates/s**`);
  });

  it('spreads the board over enough shards, each under a partition’s limit', () => {
    const perShard = HOT_BOARD_CREATES / SCOPE_WRITE_SHARDS;
    expect(perShard).toBeLessThan(PARTITION_WRU);
    expect(PAGE).toContain(`modulo **${SCOPE_WRITE_SHARDS}**`);
    expect(PAGE).toContain(`**${perShard} WRU/s each**`);
    expect(PAGE).toContain(`${(perShard / PARTITION_WRU) * 100}% of a`);
    expect(PAGE).toContain(`up to **${thousands(SCOPE_WRITE_SHARDS * PARTITION_WRU)} creates/s**`);
    expect(PAGE).toContain(`${SCOPE_WRITE_SHARDS} × 0.5 = ${SCOPE_WRITE_SHARDS * 0.5} RRU`);
  });

  it('finds the board and membership reads over a partition’s read limit without a cache', () => {
    const board = HOT_BOARD_CREATES * 0.5;
    const membership = HOT_BOARD_CREATES * 1;
    expect(board).toBeGreaterThan(PARTITION_RRU);
    expect(membership).toBeGreaterThan(PARTITION_RRU);
    expect(PAGE).toContain(`**${thousands(board)} RRU/s**`);
    expect(PAGE).toContain(`**${thousands(membership)} RRU/s**`);
  });

  it('sizes Lambda concurrency, the table quota and API Gateway for it', () => {
    const creates = HOT_BOARD_CREATES * CREATE_SECONDS;
    const embeds = HOT_BOARD_CREATES * EMBED_SECONDS;
    expect(PAGE).toContain(`= **${creates}**`);
    expect(PAGE).toContain(`= **${embeds}**`);
    expect(creates + embeds).toBe(LAMBDA_CONCURRENCY_QUOTA);
    expect(HOT_BOARD_CREATES).toBeLessThan(TABLE_WRU_QUOTA);
    const requests = 2 * HOT_BOARD_CREATES;
    expect(requests).toBe(2 * API_GATEWAY_ACCOUNT_RPS);
    expect(PAGE).toContain(`**${thousands(requests)} requests/s**`);
  });
});

describe('docs/scale.md: the logouts of a revoke-all', () => {
  const COVERED = 10_000;
  /** The page's assumptions: one second per logout, Lambda's SQS scaling, KMS's elliptic-curve quota. */
  const SECONDS_PER_LOGOUT = 1;
  const SQS_START_INVOCATIONS = 5;
  const SQS_ADDED_PER_SECOND = 300 / 60;
  const KMS_ECC_PER_SECOND = 1_000;

  it('releases 10,000 logouts within 60 s, at a rate the delivery function reaches in seconds', () => {
    const perPart = COVERED / SCOPE_WRITE_SHARDS;
    expect(PAGE).toContain(`${thousands(COVERED)} / ${SCOPE_WRITE_SHARDS} parts | **${perPart}**`);
    expect(PAGE).toContain(
      `${perPart} / ${FAN_OUT_PAGE_SIZE} per page, rounded up | **${Math.ceil(perPart / FAN_OUT_PAGE_SIZE)}**`,
    );
    const rate = SCOPE_WRITE_SHARDS * LOGOUTS_PER_PART_PER_SECOND;
    expect(PAGE).toContain(
      `${SCOPE_WRITE_SHARDS} parts × ${LOGOUTS_PER_PART_PER_SECOND} logouts/s | **${rate} logouts/s**`,
    );
    const release = perPart / LOGOUTS_PER_PART_PER_SECOND;
    expect(release).toBeLessThan(60);
    expect(PAGE).toContain(`${perPart} / ${LOGOUTS_PER_PART_PER_SECOND} per second | **${release} s**`);
    expect(PAGE).toContain(`${thousands(COVERED)} logouts / ${SQS_BATCH_MAX} per \`SendMessageBatch\``);
    const invocations = (rate * SECONDS_PER_LOGOUT) / DELIVERY_QUEUE_SOURCE.batchSize;
    expect(PAGE).toContain(
      `/ ${DELIVERY_QUEUE_SOURCE.batchSize} messages per invocation | **${invocations}** invocations`,
    );
    const scaling = (invocations - SQS_START_INVOCATIONS) / SQS_ADDED_PER_SECOND;
    expect(PAGE).toContain(
      `(${invocations} − ${SQS_START_INVOCATIONS}) / ${SQS_ADDED_PER_SECOND} | **${scaling} s**`,
    );
    expect(PAGE).toContain(`**${(rate / KMS_ECC_PER_SECOND) * 100} %** of the signing quota`);
  });
});
