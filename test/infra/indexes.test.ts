import { describe, expect, it } from 'vitest';
import { InfraConfigError, readInfraConfig } from '#infra/config';
import { planIndexes } from '#infra/indexes';
import { TABLE_KEYS, TABLES, type TableKey } from '#lib/definitions/tables';
import { resources, synthesize, tableLogicalIds } from '#test/support/infra';

const namesOf = (table: TableKey) => TABLES[table].indexes.map((index) => index.indexName);
const planned = (plan: ReturnType<typeof planIndexes>, table: TableKey) =>
  plan.indexes[table].map((index) => index.indexName);

/** Every table as the definitions have it, but `table` with only `has`. */
function deployedWith(table: TableKey, has: string[]) {
  return { ...Object.fromEntries(TABLE_KEYS.map((key) => [key, namesOf(key)])), [table]: has };
}

describe('the order in which a deployed stage gains indexes', () => {
  it('gives every table all its indexes when nothing is deployed (a new stage creates them with the tables)', () => {
    const plan = planIndexes(undefined);
    for (const table of TABLE_KEYS) expect(planned(plan, table)).toEqual(namesOf(table));
    expect(plan.pending).toEqual([]);
  });

  it('adds one missing index per table and deploy, in the order of the definitions, and lists the rest', () => {
    const [first, second, ...rest] = namesOf('sessions');
    const plan = planIndexes(deployedWith('sessions', [first as string]));
    expect(planned(plan, 'sessions')).toEqual([first, second]);
    expect(plan.pending).toEqual(rest.map((indexName) => ({ table: 'sessions', indexName, change: 'add' })));
    expect(planned(plan, 'events')).toEqual(namesOf('events'));
  });

  it('adds the next index to each table that lacks some, in the same deploy', () => {
    const deployed = { ...deployedWith('sessions', []), memberships: [] };
    const plan = planIndexes(deployed);
    expect(planned(plan, 'sessions')).toEqual(namesOf('sessions').slice(0, 1));
    expect(planned(plan, 'memberships')).toEqual(namesOf('memberships').slice(0, 1));
    expect(plan.pending.filter(({ table }) => table === 'memberships')).toHaveLength(
      namesOf('memberships').length - 1,
    );
  });

  it('reaches every index after as many deploys as the table lacks, each step one index', () => {
    let has: string[] = [];
    let deploys = 0;
    for (;;) {
      const plan = planIndexes(deployedWith('sessions', has));
      const next = planned(plan, 'sessions');
      expect(next.length - has.length).toBeLessThanOrEqual(1);
      has = next;
      deploys += 1;
      if (plan.pending.length === 0) break;
    }
    expect(has).toEqual(namesOf('sessions'));
    expect(deploys).toBe(namesOf('sessions').length);
  });

  it('drops an index no longer defined before adding any, since that deploy’s one change is the drop', () => {
    const [first, ...rest] = namesOf('sessions');
    const plan = planIndexes(deployedWith('sessions', [first as string, 'retired-index']));
    expect(planned(plan, 'sessions')).toEqual([first]);
    expect(plan.pending).toEqual(rest.map((indexName) => ({ table: 'sessions', indexName, change: 'add' })));
  });

  it('drops one obsolete index per table and deploy, keeping the others as deployed and listing their drops', () => {
    const retiredA = {
      indexName: 'retired-a',
      partitionKey: { name: 'a', type: 'S' },
      projection: 'KEYS_ONLY',
    } as const;
    const retiredB = {
      indexName: 'retired-b',
      partitionKey: { name: 'b', type: 'S' },
      sortKey: { name: 'n', type: 'N' },
      projection: { include: ['x'] },
    } as const;
    const plan = planIndexes({
      ...deployedWith('sessions', namesOf('sessions')),
      sessions: [...namesOf('sessions'), retiredA, retiredB],
    });
    expect(plan.indexes.sessions).toEqual([...TABLES.sessions.indexes, retiredB]);
    expect(plan.pending).toEqual([{ table: 'sessions', indexName: 'retired-b', change: 'drop' }]);
    const next = planIndexes({
      ...deployedWith('sessions', namesOf('sessions')),
      sessions: [...namesOf('sessions'), retiredB],
    });
    expect(plan.indexes.memberships).toEqual(TABLES.memberships.indexes);
    expect(next.indexes.sessions).toEqual(TABLES.sessions.indexes);
    expect(next.pending).toEqual([]);
  });

  it('refuses to drop an index while another obsolete one has no definition to keep it by', () => {
    expect(() =>
      planIndexes({
        ...deployedWith('sessions', namesOf('sessions')),
        sessions: [...namesOf('sessions'), 'retired-a', 'retired-b'],
      }),
    ).toThrow(/sessions\.retired-b/);
  });

  it('gives a table the stage does not have yet every index', () => {
    const { sessions: _absent, ...others } = deployedWith('sessions', []);
    expect(planned(planIndexes(others), 'sessions')).toEqual(namesOf('sessions'));
  });
});

describe('the deployedIndexes context key', () => {
  const read = (deployedIndexes: unknown) =>
    readInfraConfig((key) => (key === 'deployedIndexes' ? deployedIndexes : undefined));

  it('reads a JSON string from -c and an object from cdk.json alike', () => {
    expect(read('{"sessions":["tokenHash-index"]}').deployedIndexes).toEqual({
      sessions: ['tokenHash-index'],
    });
    expect(read({ sessions: ['tokenHash-index'] }).deployedIndexes).toEqual({
      sessions: ['tokenHash-index'],
    });
  });

  it('takes the definition of an index no longer defined beside the names', () => {
    const old = { indexName: 'old', partitionKey: { name: 'a', type: 'S' }, projection: 'KEYS_ONLY' };
    expect(read(JSON.stringify({ sessions: ['tokenHash-index', old] })).deployedIndexes).toEqual({
      sessions: ['tokenHash-index', old],
    });
  });

  it.each([
    ['text that is not JSON', '{sessions'],
    ['a list', '["tokenHash-index"]'],
    ['an unknown table', '{"session":[]}'],
    ['names that are not a list', '{"sessions":"tokenHash-index"}'],
    ['an index definition without keys', '{"sessions":[{"indexName":"old","projection":"ALL"}]}'],
  ])('refuses %s with a message naming the key', (_name, value) => {
    expect(() => read(value)).toThrow(InfraConfigError);
    expect(() => read(value)).toThrow(/deployedIndexes/);
  });
});

describe('a stack synthesized for a stage that lacks indexes', () => {
  it('keeps the deployed indexes, adds the next one, and warns that more deploys follow', () => {
    const [first, second] = namesOf('sessions');
    const synth = synthesize({
      context: { deployedIndexes: JSON.stringify(deployedWith('sessions', [first as string])) },
    });
    try {
      const ids = tableLogicalIds(synth.template);
      const sessions = resources(synth.template, 'AWS::DynamoDB::Table')[ids.sessions];
      expect(
        sessions.Properties.GlobalSecondaryIndexes.map((index: { IndexName: string }) => index.IndexName),
      ).toEqual([first, second]);
      const warnings = synth.app
        .synth()
        .getStackArtifact(synth.stack.artifactId)
        .messages.filter(
          (message) => message.level === 'warning' && String(message.entry.data).includes('npm run deploy'),
        );
      expect(warnings).toHaveLength(1);
      expect(String(warnings[0]?.entry.data)).toContain(
        `${namesOf('sessions').length - 2} table index change(s)`,
      );
    } finally {
      synth.dispose();
    }
  });
});
