/**
 * The order in which a deployed stage gains the tables' global secondary indexes. CloudFormation creates or
 * deletes at most one index of a table per stack update, so a stage whose tables lack several indexes of
 * lib/definitions/tables.ts gets them over several deploys: each deploy keeps what the table has and adds
 * the next missing index, in the order of the definitions; a table with indexes no longer defined first
 * loses them, one per deploy. `npm run deploy` (infra/deploy.ts) reads what the
 * stage has, passes it as the `deployedIndexes` context key, and deploys again until nothing is pending.
 */
import { type IndexDefinition, TABLE_KEYS, TABLES, type TableKey } from '#lib/definitions/tables';

/**
 * An index of a deployed table: its name, or its whole definition as DynamoDB describes it. A name is
 * enough for an index the definitions still have; an index they no longer have must come with its
 * definition, so a deploy that drops another index can keep this one until its own turn.
 */
export type DeployedIndex = string | IndexDefinition;

/** The indexes each table of a deployed stage has; a table not named is not deployed yet. */
export type DeployedIndexes = Partial<Record<TableKey, readonly DeployedIndex[]>>;

/** One change to a table's indexes that a later deploy makes. */
export interface PendingIndexChange {
  table: TableKey;
  indexName: string;
  change: 'add' | 'drop';
}

export interface IndexPlan {
  /** The indexes each table gets from this deploy: the defined ones in their order, then obsolete ones kept. */
  indexes: Record<TableKey, readonly IndexDefinition[]>;
  /** The changes later deploys make, table by table, in the order they will come. */
  pending: PendingIndexChange[];
}

const nameOf = (index: DeployedIndex): string => (typeof index === 'string' ? index : index.indexName);

/**
 * What this deploy gives each table. Unset (a new stage, or one whose operator orders nothing): every
 * index, which CloudFormation creates with a new table in one go. A table the stage does not have yet gets
 * every index too. A table that has indexes no longer defined loses the first of them (deleting is that
 * deploy's one change), keeps the others as deployed until their own deploys, and gains nothing yet.
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
    const hasNames = has.map(nameOf);
    const kept = defined.filter((index) => hasNames.includes(index.indexName));
    const missing = defined.filter((index) => !hasNames.includes(index.indexName));
    const obsolete = has.filter((index) => !defined.some((d) => d.indexName === nameOf(index)));
    const [, ...laterDrops] = obsolete;
    const next = obsolete.length > 0 ? undefined : missing[0];
    indexes[table] = [
      ...defined.filter((index) => kept.includes(index) || index === next),
      ...laterDrops.map((index) => {
        if (typeof index === 'string')
          throw new Error(
            `deployedIndexes names ${table}.${index}, which is no longer defined, without its definition: ` +
              'the deploy that drops another index must keep it as it is (npm run deploy passes it)',
          );
        return index;
      }),
    ];
    for (const index of laterDrops) pending.push({ table, indexName: nameOf(index), change: 'drop' });
    for (const index of missing.filter((index) => index !== next))
      pending.push({ table, indexName: index.indexName, change: 'add' });
  }
  return { indexes, pending };
}

/** How a pending change reads in a message: `sessions.x` to add, `drop sessions.y`. */
export function describeChange({ table, indexName, change }: PendingIndexChange): string {
  return change === 'drop' ? `drop ${table}.${indexName}` : `${table}.${indexName}`;
}

/** The problems of a `deployedIndexes` value: an object of table keys, each a list of index names. */
export function deployedIndexesProblem(value: unknown): string | undefined {
  const expected = `deployedIndexes must be a JSON object of table keys (${TABLE_KEYS.join(', ')}) to lists of index names or definitions`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return expected;
  for (const [table, names] of Object.entries(value)) {
    if (!(TABLE_KEYS as string[]).includes(table)) return `${expected}; "${table}" is no table key`;
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string' || isIndexDefinition(name)))
      return `${expected}; "${table}" is not a list of names or definitions`;
  }
  return undefined;
}

/** An index definition as lib/definitions/tables.ts writes one (what infra/deploy.ts reads from DynamoDB). */
function isIndexDefinition(value: unknown): value is IndexDefinition {
  const key = (k: unknown) =>
    typeof k === 'object' &&
    k !== null &&
    typeof (k as { name?: unknown }).name === 'string' &&
    ['S', 'N'].includes((k as { type?: unknown }).type as string);
  if (typeof value !== 'object' || value === null) return false;
  const index = value as Partial<Record<keyof IndexDefinition, unknown>>;
  const projection = index.projection;
  return (
    typeof index.indexName === 'string' &&
    key(index.partitionKey) &&
    (index.sortKey === undefined || key(index.sortKey)) &&
    (projection === 'ALL' ||
      projection === 'KEYS_ONLY' ||
      (typeof projection === 'object' &&
        projection !== null &&
        Array.isArray((projection as { include?: unknown }).include) &&
        (projection as { include: unknown[] }).include.every((name) => typeof name === 'string')))
  );
}
