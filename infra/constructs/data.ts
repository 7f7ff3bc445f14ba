import { RemovalPolicy } from 'aws-cdk-lib';
import {
  type Attribute,
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import type { IndexPlan } from '#infra/indexes';
import {
  type IndexProjection,
  type KeyDefinition,
  TABLE_KEYS,
  TABLES,
  type TableDefinition,
  type TableKey,
} from '#lib/definitions/tables';

/**
 * The service's DynamoDB tables, one per entry of the shared table definitions, with the indexes this
 * deploy gives them (infra/indexes.ts: every index, unless a deployed stage gains them one per deploy).
 */
export class DataTables extends Construct {
  readonly tables: Record<TableKey, Table>;

  constructor(scope: Construct, id: string, props: { indexes: IndexPlan['indexes'] }) {
    super(scope, id);
    const tables = {} as Record<TableKey, Table>;
    for (const key of TABLE_KEYS) {
      const definition: TableDefinition = TABLES[key];
      // The construct id is part of the table's identity: renaming it would create a new, empty table
      // and (with RETAIN) orphan the old one.
      const table = new Table(this, constructId(key), {
        partitionKey: attribute(definition.partitionKey),
        sortKey: definition.sortKey && attribute(definition.sortKey),
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        deletionProtection: true,
        // Deleting the stack must never delete customer data.
        removalPolicy: RemovalPolicy.RETAIN,
        encryption: TableEncryption.AWS_MANAGED,
        timeToLiveAttribute: definition.timeToLiveAttribute,
        ...(definition.stream === 'NEW_AND_OLD_IMAGES' ? { stream: StreamViewType.NEW_AND_OLD_IMAGES } : {}),
      });
      for (const index of props.indexes[key]) {
        table.addGlobalSecondaryIndex({
          indexName: index.indexName,
          partitionKey: attribute(index.partitionKey),
          sortKey: index.sortKey && attribute(index.sortKey),
          ...projection(index.projection),
        });
      }
      tables[key] = table;
    }
    this.tables = tables;
  }
}

/** `apiKeys` -> `ApiKeys`: construct ids (and so logical ids) in PascalCase. */
export function constructId(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function projection(value: IndexProjection): { projectionType: ProjectionType; nonKeyAttributes?: string[] } {
  if (value === 'ALL') return { projectionType: ProjectionType.ALL };
  if (value === 'KEYS_ONLY') return { projectionType: ProjectionType.KEYS_ONLY };
  return { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...value.include] };
}

function attribute(key: KeyDefinition): Attribute {
  return { name: key.name, type: key.type === 'N' ? AttributeType.NUMBER : AttributeType.STRING };
}
