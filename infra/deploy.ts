/**
 * `npm run deploy -- [cdk deploy options]`: deploys a stage, and deploys it again while its tables still
 * lack indexes (CloudFormation adds one index per table and update; see infra/indexes.ts). Each round
 * reads the indexes the stage's tables have, passes them as the `deployedIndexes` context key, and runs
 * `cdk deploy` with the options given; it stops at the first failure, with cdk's exit code. Once the
 * stack is updated it runs the copies pass of `compact-cutoffs` (docs/operations.md, "Upgrading").
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  type AttributeDefinition,
  DescribeTableCommand,
  DynamoDBClient,
  type GlobalSecondaryIndexDescription,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { constructId } from '#infra/constructs/data';
import { type DeployedIndexes, describeChange, planIndexes } from '#infra/indexes';
import { DynamoCutoffRecords } from '#lib/adapters/dynamodb/cutoff-records';
import {
  type IndexDefinition,
  type KeyDefinition,
  TABLE_KEYS,
  TABLES,
  type TableKey,
} from '#lib/definitions/tables';
import type { CutoffCopying } from '#lib/domain/ports';

export interface DeployDeps {
  /**
   * The indexes of each table of the stack as deployed (names, and definitions for indexes no longer
   * defined); undefined when the stack does not exist.
   */
  deployedIndexes(stackName: string): Promise<DeployedIndexes | undefined>;
  /** Runs `cdk deploy` with these arguments; resolves to its exit code. */
  cdkDeploy(args: string[]): Promise<number>;
  /**
   * Whether the stack as deployed predates cut-off record copies: it exists and has no
   * `CutoffRecordCopies` output. False for a stage not deployed yet.
   */
  predatesCutoffCopies(stackName: string): Promise<boolean>;
  /** The copies pass of `compact-cutoffs` on the stage's sessions table (`CutoffRecordStore.copyCutoffs`). */
  copyCutoffs(stackName: string): Promise<CutoffCopying>;
  print(line: string): void;
}

/** The most rounds: more than the indexes of any table, so a stage never loops on a deploy that adds none. */
const MAX_ROUNDS = 10;

/** Deploys until no index is pending; the exit code of the last `cdk deploy` (1 when rounds ran out). */
export async function deployInRounds(deps: DeployDeps, args: string[], stageName: string): Promise<number> {
  const stackName = `EmbedSessionService-${stageName}`;
  // Read before the first round: once it is updated, the stack has the output whatever it had before.
  const upgradesToCopies = await deps.predatesCutoffCopies(stackName);
  for (let round = 1; round <= MAX_ROUNDS; round += 1) {
    const deployed = await deps.deployedIndexes(stackName);
    const { pending } = planIndexes(deployed);
    const context = deployed === undefined ? [] : ['-c', `deployedIndexes=${JSON.stringify(deployed)}`];
    const code = await deps.cdkDeploy([...args, ...context]);
    if (code !== 0) return code;
    if (pending.length === 0) return upgradesToCopies ? copyCutoffs(deps, stackName) : 0;
    deps.print(
      `${stackName}: ${pending.length} index change(s) still to make (${pending
        .map(describeChange)
        .join(', ')}); CloudFormation makes one per table and deploy: deploying again`,
    );
  }
  deps.print(`${stackName}: indexes still pending after ${MAX_ROUNDS} deploys; run npm run deploy again`);
  return 1;
}

/**
 * Gives every cut-off record the copies it lacks and completes each copy with what copy 0 holds from a
 * version without copies: a record written before the deploy, or during it by that version's functions
 * still running beside this one's, reaches the copies this version's sessions read. Run once the stack
 * is updated, when no earlier function writes any more, and only on an upgrade from a version without
 * copies: it reads every item of the sessions table, and a stage that had copies already has nothing
 * for it to do. 1 (the command to run again) when a record is left unfinished.
 */
async function copyCutoffs(deps: DeployDeps, stackName: string): Promise<number> {
  const done = await deps.copyCutoffs(stackName);
  deps.print(`${stackName}: cut-off record copies ${JSON.stringify(done)}`);
  if (done.unfinished === 0) return 0;
  deps.print(
    `${stackName}: ${done.unfinished} cut-off record(s) unfinished: run npm run --silent admin -- compact-cutoffs`,
  );
  return 1;
}

/** The stage from `-c stageName=…` / `--context stageName=…` among the arguments, else cdk.json's. */
export function stageNameOf(args: string[], cdkJsonStage: string): string {
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    const value = arg === '-c' || arg === '--context' ? args[i + 1] : arg.replace(/^--context=/, '');
    const match = /^stageName=(.+)$/.exec(value ?? '');
    if (match?.[1]) return match[1];
  }
  return cdkJsonStage;
}

/** The stack's outputs through the AWS CLI (which the operations runbooks use); undefined: no such stack. */
function stackOutputs(stackName: string): Promise<Record<string, string> | undefined> {
  return new Promise((resolve, reject) => {
    execFile(
      'aws',
      [
        'cloudformation',
        'describe-stacks',
        '--stack-name',
        stackName,
        '--query',
        'Stacks[0].Outputs',
        '--output',
        'json',
      ],
      (error, stdout, stderr) => {
        if (error) {
          if (/does not exist/.test(stderr)) resolve(undefined);
          else
            reject(new Error(`aws cloudformation describe-stacks failed: ${stderr.trim() || error.message}`));
          return;
        }
        const outputs = (JSON.parse(stdout || 'null') ?? []) as { OutputKey: string; OutputValue: string }[];
        resolve(Object.fromEntries(outputs.map((output) => [output.OutputKey, output.OutputValue])));
      },
    );
  });
}

/** What the deployed tables have, read from DynamoDB itself: an index being created counts as there. */
async function readDeployedIndexes(stackName: string): Promise<DeployedIndexes | undefined> {
  const outputs = await stackOutputs(stackName);
  if (!outputs) return undefined;
  const client = new DynamoDBClient({});
  try {
    const deployed: DeployedIndexes = {};
    for (const table of TABLE_KEYS) {
      const tableName = outputs[`${constructId(table)}TableName`];
      if (!tableName) continue;
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      deployed[table] = (Table?.GlobalSecondaryIndexes ?? []).flatMap((index) =>
        index.IndexName ? [deployedIndex(table, index, Table?.AttributeDefinitions ?? [])] : [],
      );
    }
    return deployed;
  } finally {
    client.destroy();
  }
}

/** Whether the deployed stack lacks the output this version's stacks have: it ran a version without copies. */
async function predatesCutoffCopies(stackName: string): Promise<boolean> {
  const outputs = await stackOutputs(stackName);
  return outputs !== undefined && outputs.CutoffRecordCopies === undefined;
}

/** The copies pass on the stage's sessions table, by its name in the stack's outputs. */
async function copyStageCutoffs(stackName: string): Promise<CutoffCopying> {
  const tableName = (await stackOutputs(stackName))?.[`${constructId('sessions')}TableName`];
  if (!tableName) throw new Error(`${stackName} has no sessions table output`);
  // The region and credentials `cdk deploy` used, as for the tables' indexes above.
  const db = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
  try {
    return await new DynamoCutoffRecords(db, tableName).copyCutoffs(new Date().toISOString());
  } finally {
    db.destroy();
  }
}

/**
 * An index as DynamoDB describes it: its name when the definitions still have it, else its definition,
 * which keeps it in the template while a deploy drops another (CloudFormation deletes one per update).
 */
export function deployedIndex(
  table: TableKey,
  index: GlobalSecondaryIndexDescription,
  attributes: readonly AttributeDefinition[],
): string | IndexDefinition {
  const indexName = index.IndexName as string;
  if (TABLES[table].indexes.some((defined) => defined.indexName === indexName)) return indexName;
  const key = (keyType: 'HASH' | 'RANGE'): KeyDefinition | undefined => {
    const name = index.KeySchema?.find((element) => element.KeyType === keyType)?.AttributeName;
    if (name === undefined) return undefined;
    const type = attributes.find((attribute) => attribute.AttributeName === name)?.AttributeType;
    if (type !== 'S' && type !== 'N')
      throw new Error(`${table}.${indexName} has key ${name} of type ${type}, which the stack cannot keep`);
    return { name, type };
  };
  const partitionKey = key('HASH');
  if (!partitionKey) throw new Error(`${table}.${indexName} has no partition key in its description`);
  const sortKey = key('RANGE');
  const { ProjectionType, NonKeyAttributes } = index.Projection ?? {};
  const projection: IndexDefinition['projection'] =
    ProjectionType === 'INCLUDE'
      ? { include: NonKeyAttributes ?? [] }
      : ProjectionType === 'KEYS_ONLY'
        ? 'KEYS_ONLY'
        : 'ALL';
  return { indexName, partitionKey, ...(sortKey ? { sortKey } : {}), projection };
}

function cdkDeploy(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('npx', ['cdk', 'deploy', ...args], { stdio: 'inherit' });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  const args = process.argv.slice(2);
  const cdkJson = JSON.parse(readFileSync(new URL('../cdk.json', import.meta.url), 'utf8')) as {
    context: { stageName: string };
  };
  try {
    process.exitCode = await deployInRounds(
      {
        deployedIndexes: readDeployedIndexes,
        cdkDeploy,
        predatesCutoffCopies,
        copyCutoffs: copyStageCutoffs,
        print: (line) => process.stdout.write(`${line}\n`),
      },
      args,
      stageNameOf(args, cdkJson.context.stageName),
    );
  } catch (error) {
    // The stage could not be read (no credentials, no AWS CLI): the message says which; a trace would bury it.
    process.stderr.write(`npm run deploy: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
