/**
 * The order in which a deployed stage gains the tables' global secondary indexes. CloudFormation creates or
 * deletes at most one index of a table per stack update, so a stage whose tables lack several indexes of
 * lib/definitions/tables.ts gets them over several deploys: each deploy keeps what the table has and adds
 * the next missing index, in the order of the definitions. `npm run deploy` (infra/deploy.ts) reads what the
 * stage has, passes it as the `deployedIndexes` context key, and deploys again until nothing is pending.
 */
import { type IndexDefinition, TABLE_KEYS, TABLES, type TableKey } from '#lib/definitions/tables';

/** The index names each table of a deployed stage has; a table not named is not deployed yet. */
export type DeployedIndexes = Partial<Record<TableKey, readonly string[]>>;

export interface IndexPlan {
  /** The indexes each table gets from this deploy, in the order of the definitions. */
  indexes: Record<TableKey, readonly IndexDefinition[]>;
  /** The indexes a later deploy adds, table by table, in the order they will come. */
  pending: { table: TableKey; indexName: string }[];
}

/**
 * What this deploy gives each table. Unset (a new stage, or one whose operator orders nothing): every
 * index, which CloudFormation creates with a new table in one go. A table the stage does not have yet gets
 * every index too. A table that has indexes no longer defined loses them first (deleting is that deploy's
 * one change), and gains nothing in that deploy.
 */
export function planIndexes(deployed: DeployedIndexes | undefined): IndexPlan {
  const indexes = {} as Record<TableKey, readonly IndexDefinition[]>;
  const pending: IndexPlan['pending'] = [];
  for (const table of TABLE_KEYS) {
    const defined = TABLES[table].indexes;
    const has = deployed?.[table];
    if (has === undefined) {
      indexes[table] = defined;
      continue;
    }
    const kept = defined.filter((index) => has.includes(index.indexName));
    const missing = defined.filter((index) => !has.includes(index.indexName));
    const dropping = has.some((name) => !defined.some((index) => index.indexName === name));
    const next = dropping ? undefined : missing[0];
    indexes[table] = defined.filter((index) => kept.includes(index) || index === next);
    for (const index of missing.filter((index) => index !== next))
      pending.push({ table, indexName: index.indexName });
  }
  return { indexes, pending };
}

/** The problems of a `deployedIndexes` value: an object of table keys, each a list of index names. */
export function deployedIndexesProblem(value: unknown): string | undefined {
  const expected = `deployedIndexes must be a JSON object of table keys (${TABLE_KEYS.join(', ')}) to lists of index names`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return expected;
  for (const [table, names] of Object.entries(value)) {
    if (!(TABLE_KEYS as string[]).includes(table)) return `${expected}; "${table}" is no table key`;
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string'))
      return `${expected}; "${table}" is not a list of names`;
  }
  return undefined;
}
