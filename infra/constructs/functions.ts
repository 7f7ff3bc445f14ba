import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ServiceDefinitions } from '#infra/definitions';
import type { TableKey } from '#lib/definitions/tables';
import { constructId } from './data';
import { ServiceFunction, type ServiceFunctionProps } from './service-function';

export interface ServiceFunctionsProps {
  definitions: ServiceDefinitions;
  tables: Record<TableKey, ITable>;
  environment: ServiceFunctionProps['environment'];
  logRetention: RetentionDays;
  keys?: ServiceFunctionProps['keys'];
  /** Provisioned concurrency of the functions that have some, by name. */
  provisionedConcurrency?: Readonly<Record<string, number>>;
}

/** One `ServiceFunction` per function definition; new definitions need no change here. */
export class ServiceFunctions extends Construct {
  readonly functions: Readonly<Record<string, ServiceFunction>>;

  constructor(scope: Construct, id: string, props: ServiceFunctionsProps) {
    super(scope, id);
    const functions: Record<string, ServiceFunction> = {};
    for (const [name, definition] of Object.entries(props.definitions.functions)) {
      functions[name] = new ServiceFunction(this, constructId(name), {
        definition,
        tables: props.tables,
        environment: props.environment,
        logRetention: props.logRetention,
        keys: props.keys,
        provisionedConcurrency: props.provisionedConcurrency?.[name],
      });
    }
    this.functions = functions;
  }

  /** The function of the given name; a route naming an unknown function is a definition error. */
  get(name: string): ServiceFunction {
    const fn = this.functions[name];
    if (!fn) throw new Error(`No function named "${name}" in the function definitions`);
    return fn;
  }
}
