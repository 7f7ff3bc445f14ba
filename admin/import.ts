/**
 * `admin import FILE.jsonl`: boards and memberships in bulk, one JSON object a line. Each line states
 * what should be (a board's whole state, as the provisioning API's PUT does; a membership), so running a
 * file again converges and writes nothing for what is already so: an interrupted import is resumed by
 * running it again (or, on a long file, from the first line not reported done, `--from-line`). A line
 * that fails is reported with its number and the import goes on.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parsePutBoardRequest } from '#lib/adapters/http/validation/provisioning';
import type { BoardAppUrlRule } from '#lib/domain/board-app';
import type { BoardRepository, Clock, MembershipRepository } from '#lib/domain/ports';
import { addMember, applyBoard, type WriteOutcome } from '#lib/use-cases/admin';

export interface ImportDeps {
  boards: BoardRepository;
  memberships: MembershipRepository;
  appUrlRule: BoardAppUrlRule;
  actor: string;
  clock: Clock;
}

export interface ImportReport {
  /** The lines read from `fromLine` on (blank lines included, not counted below). */
  lines: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  /** Each failed line, by number (1-based, in the file), with why. */
  errors: { line: number; error: string }[];
}

/**
 * How many lines are written at once. DynamoDB takes far more; this keeps a local runtime responsive
 * and brings 10,000 lines well under a minute (docs/operations.md, "Bulk import").
 */
export const IMPORT_CONCURRENCY = 16;

/** Imports the file from line `fromLine`; never throws for a line, only for a file it cannot read. */
export async function importFile(deps: ImportDeps, path: string, fromLine = 1): Promise<ImportReport> {
  const report: ImportReport = { lines: 0, created: 0, updated: 0, unchanged: 0, failed: 0, errors: [] };
  // Lines about the same board or membership wait for each other, so the file's order decides.
  const last = new Map<string, Promise<void>>();
  const running = new Set<Promise<void>>();
  let number = 0;
  for await (const text of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    number += 1;
    if (number < fromLine) continue;
    report.lines += 1;
    if (text.trim() === '') continue;
    const line = number;
    const parsed = parseLine(text);
    const key = 'error' in parsed ? `line:${line}` : parsed.key;
    const task = (last.get(key) ?? Promise.resolve()).then(async () => {
      try {
        if ('error' in parsed) throw new Error(parsed.error);
        report[await parsed.apply(deps)] += 1;
      } catch (error) {
        report.failed += 1;
        report.errors.push({ line, error: error instanceof Error ? error.message : String(error) });
      }
    });
    last.set(key, task);
    running.add(task);
    void task.finally(() => {
      running.delete(task);
      if (last.get(key) === task) last.delete(key);
    });
    if (running.size >= IMPORT_CONCURRENCY) await Promise.race(running);
  }
  await Promise.all(running);
  report.errors.sort((a, b) => a.line - b.line);
  return report;
}

type Line = { key: string; apply: (deps: ImportDeps) => Promise<WriteOutcome> } | { error: string };

function parseLine(text: string): Line {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'not a JSON object' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { error: 'not a JSON object' };
  const { type, orgId, boardId, userId, ...rest } = value as Record<string, unknown>;
  if (typeof orgId !== 'string' || orgId === '') return { error: 'orgId is required' };
  if (type === 'board') {
    if (typeof boardId !== 'string' || boardId === '') return { error: 'boardId is required' };
    return {
      key: `board:${boardId}`,
      apply: async (deps) => (await applyBoard(deps, parsePutBoardRequest(rest, { orgId, boardId }))).outcome,
    };
  }
  if (type === 'membership') {
    if (typeof userId !== 'string' || userId === '') return { error: 'userId is required' };
    return {
      key: `member:${orgId}:${userId}`,
      apply: async (deps) => (await addMember(deps, orgId, userId)).outcome,
    };
  }
  return { error: 'type must be "board" or "membership"' };
}
