import { describe, expect, it } from 'vitest';
import { type DeployDeps, deployedIndex, deployInRounds, stageNameOf } from '#infra/deploy';
import type { DeployedIndexes } from '#infra/indexes';
import { planIndexes } from '#infra/indexes';
import { TABLE_KEYS, TABLES } from '#lib/definitions/tables';
import type { CutoffCopying } from '#lib/domain/ports';

const ALL: DeployedIndexes = Object.fromEntries(
  TABLE_KEYS.map((key) => [key, TABLES[key].indexes.map((index) => index.indexName)]),
);

/**
 * A stage as CloudFormation keeps it: each `cdk deploy` gives the tables what the stack plans from the
 * `deployedIndexes` it is passed, or fails with `failWith`.
 */
function stage(
  initial: DeployedIndexes | undefined,
  failWith?: number,
  copying: CutoffCopying = { records: 2, copiesWritten: 7, unfinished: 0 },
  predates = initial !== undefined,
) {
  let deployed = initial;
  const deploys: string[][] = [];
  const printed: string[] = [];
  /** What happened, in order: each deploy, and each copies pass with the tables it found. */
  const steps: string[] = [];
  /** Per deploy, how many indexes each table lost. */
  const drops: number[][] = [];
  const deps: DeployDeps = {
    deployedIndexes: async () => deployed,
    cdkDeploy: async (args) => {
      deploys.push(args);
      steps.push('deploy');
      if (failWith !== undefined) return failWith;
      const at = args.indexOf('-c');
      const given =
        at >= 0
          ? (JSON.parse((args[at + 1] as string).replace(/^deployedIndexes=/, '')) as DeployedIndexes)
          : undefined;
      const { indexes } = planIndexes(given);
      // What DynamoDB describes: names stand for the defined indexes, definitions for the others.
      deployed = Object.fromEntries(
        TABLE_KEYS.map((key) => [
          key,
          indexes[key].map((index) =>
            TABLES[key].indexes.some((defined) => defined.indexName === index.indexName)
              ? index.indexName
              : index,
          ),
        ]),
      );
      drops.push(
        TABLE_KEYS.map(
          (key) =>
            (given?.[key] ?? []).filter(
              (entry) =>
                !indexes[key].some(
                  (index) => index.indexName === (typeof entry === 'string' ? entry : entry.indexName),
                ),
            ).length,
        ),
      );
      return 0;
    },
    predatesCutoffCopies: async () => predates,
    copyCutoffs: async (stackName) => {
      steps.push(`copy cut-offs of ${stackName} with ${JSON.stringify(deployed?.sessions)}`);
      return copying;
    },
    print: (line) => printed.push(line),
  };
  return { deps, deploys, printed, steps, drops, deployed: () => deployed };
}

describe('npm run deploy', () => {
  it('deploys a new stage once, without deployedIndexes, passing the options through', async () => {
    const s = stage(undefined);
    await expect(deployInRounds(s.deps, ['--require-approval', 'never'], 'prod')).resolves.toBe(0);
    expect(s.deploys).toEqual([['--require-approval', 'never']]);
    expect(s.deployed()).toEqual(ALL);
  });

  it('deploys a stage that lacks four sessions indexes and one memberships index four times, one index per table each', async () => {
    const s = stage({ ...ALL, sessions: ALL.sessions?.slice(0, 1), memberships: [] });
    await expect(deployInRounds(s.deps, [], 'prod')).resolves.toBe(0);
    expect(s.deploys).toHaveLength(4);
    expect(s.deployed()).toEqual(ALL);
    expect(s.deploys[0]?.[1]).toContain('"memberships":[]');
    expect(s.printed[0]).toMatch(
      /^EmbedSessionService-prod: 3 index change\(s\) still to make .*deploying again$/,
    );
  });

  it('drops two obsolete indexes of a table over two deploys, one per deploy, keeping the second until its turn', async () => {
    const retired = (indexName: string) =>
      ({ indexName, partitionKey: { name: indexName, type: 'S' }, projection: 'KEYS_ONLY' }) as const;
    const s = stage({ ...ALL, sessions: [...(ALL.sessions ?? []), retired('old-a'), retired('old-b')] });
    await expect(deployInRounds(s.deps, [], 'prod')).resolves.toBe(0);
    expect(s.deploys).toHaveLength(2);
    for (const perTable of s.drops) for (const dropped of perTable) expect(dropped).toBeLessThanOrEqual(1);
    expect(s.deployed()).toEqual(ALL);
    expect(s.printed).toEqual([
      'EmbedSessionService-prod: 1 index change(s) still to make (drop sessions.old-b); CloudFormation makes one per table and deploy: deploying again',
      'EmbedSessionService-prod: cut-off record copies {"records":2,"copiesWritten":7,"unfinished":0}',
    ]);
  });

  it('deploys an up-to-date stage once, telling the stack what it has', async () => {
    const s = stage(ALL);
    await deployInRounds(s.deps, [], 'staging');
    expect(s.deploys).toEqual([['-c', `deployedIndexes=${JSON.stringify(ALL)}`]]);
    expect(s.printed).toEqual([
      'EmbedSessionService-staging: cut-off record copies {"records":2,"copiesWritten":7,"unfinished":0}',
    ]);
  });

  it('runs the copies pass of compact-cutoffs once, after the last deploy, when no earlier function writes any more', async () => {
    const s = stage({ ...ALL, sessions: ALL.sessions?.slice(0, 1) });
    await expect(deployInRounds(s.deps, [], 'prod')).resolves.toBe(0);
    expect(s.steps).toEqual([
      'deploy',
      'deploy',
      'deploy',
      'deploy',
      `copy cut-offs of EmbedSessionService-prod with ${JSON.stringify(ALL.sessions)}`,
    ]);
  });

  it('skips the copies pass on a stage that had copies before this deploy: it would read the whole table', async () => {
    const s = stage({ ...ALL, sessions: ALL.sessions?.slice(0, 1) }, undefined, undefined, false);
    await expect(deployInRounds(s.deps, [], 'prod')).resolves.toBe(0);
    expect(s.steps).toEqual(['deploy', 'deploy', 'deploy', 'deploy']);
    expect(s.printed.some((line) => line.includes('cut-off record copies'))).toBe(false);
  });

  it('fails naming compact-cutoffs when the copies pass leaves a record unfinished', async () => {
    const s = stage(ALL, undefined, { records: 3, copiesWritten: 5, unfinished: 1 });
    await expect(deployInRounds(s.deps, [], 'prod')).resolves.toBe(1);
    expect(s.printed.at(-1)).toBe(
      'EmbedSessionService-prod: 1 cut-off record(s) unfinished: run npm run --silent admin -- compact-cutoffs',
    );
  });

  it('stops at a failed deploy with cdk’s exit code', async () => {
    const s = stage({ ...ALL, sessions: [] }, 3);
    await expect(deployInRounds(s.deps, [], 'prod')).resolves.toBe(3);
    expect(s.deploys).toHaveLength(1);
    // The stack may still run the earlier functions: no copies pass yet.
    expect(s.steps).toEqual(['deploy']);
  });

  it('takes the stage from -c, --context or --context=, else from cdk.json', () => {
    expect(stageNameOf(['-c', 'stageName=dev'], 'prod')).toBe('dev');
    expect(stageNameOf(['--context', 'stageName=qa'], 'prod')).toBe('qa');
    expect(stageNameOf(['--context=stageName=eu'], 'prod')).toBe('eu');
    expect(stageNameOf(['--require-approval', 'never'], 'prod')).toBe('prod');
  });
});

describe('the indexes npm run deploy reads from DynamoDB', () => {
  const attributes = [
    { AttributeName: 'owner', AttributeType: 'S' as const },
    { AttributeName: 'at', AttributeType: 'N' as const },
  ];

  it('names an index the definitions still have', () => {
    const name = TABLES.sessions.indexes[0]?.indexName as string;
    expect(deployedIndex('sessions', { IndexName: name }, attributes)).toBe(name);
  });

  it('describes an index no longer defined in full (keys with their types, projection), so a deploy can keep it', () => {
    expect(
      deployedIndex(
        'sessions',
        {
          IndexName: 'old-index',
          KeySchema: [
            { AttributeName: 'owner', KeyType: 'HASH' },
            { AttributeName: 'at', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status'] },
        },
        attributes,
      ),
    ).toEqual({
      indexName: 'old-index',
      partitionKey: { name: 'owner', type: 'S' },
      sortKey: { name: 'at', type: 'N' },
      projection: { include: ['status'] },
    });
    expect(
      deployedIndex(
        'sessions',
        {
          IndexName: 'old-keys',
          KeySchema: [{ AttributeName: 'owner', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        attributes,
      ),
    ).toEqual({ indexName: 'old-keys', partitionKey: { name: 'owner', type: 'S' }, projection: 'KEYS_ONLY' });
  });
});
