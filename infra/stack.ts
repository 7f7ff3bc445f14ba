import {
  Annotations,
  Aws,
  type CfnElement,
  CfnOutput,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct, IConstruct } from 'constructs';
import { defaultUsagePlanName, EmbedApi } from '#infra/constructs/api';
import { ServiceDashboard } from '#infra/constructs/dashboard';
import { constructId, DataTables } from '#infra/constructs/data';
import { EventPipeline } from '#infra/constructs/events';
import { ServiceFunctions } from '#infra/constructs/functions';
import { IdTokenKeys } from '#infra/constructs/id-token-keys';
import { Monitoring } from '#infra/constructs/monitoring';
import type { ServiceFunctionProps } from '#infra/constructs/service-function';
import { Webhooks } from '#infra/constructs/webhooks';
import { CUTOFF_COPIES } from '#lib/adapters/dynamodb/cutoff-record-items';
import { BACKGROUND_FUNCTIONS } from '#lib/definitions/background';
import { TABLES, type TableKey } from '#lib/definitions/tables';
import type { InfraConfig } from './config';
import { SERVICE_DEFINITIONS, type ServiceDefinitions } from './definitions';
import { describeChange, planIndexes } from './indexes';

export interface EmbedSessionStackProps extends StackProps {
  config: InfraConfig;
  /** Defaults to the shared definitions in lib/definitions/routes.ts; tests pass their own. */
  definitions?: ServiceDefinitions;
}

/** The whole embed session service: tables, functions, REST API, alarms and outputs. */
export class EmbedSessionStack extends Stack {
  readonly data: DataTables;
  readonly idTokenKeys: IdTokenKeys;
  readonly functions: ServiceFunctions;
  /** The event pipeline's functions (lib/definitions/background.ts): no route serves them. */
  readonly background: ServiceFunctions;
  readonly events: EventPipeline;
  readonly api: EmbedApi;
  readonly monitoring: Monitoring;
  readonly dashboard: ServiceDashboard | undefined;
  readonly webhooks: Webhooks;
  /** The managed policy that lets a principal call the provisioning routes; absent without any. */
  readonly provisioningCallerPolicy: ManagedPolicy | undefined;

  constructor(scope: Construct, id: string, props: EmbedSessionStackProps) {
    super(scope, id, props);
    const { config } = props;
    const definitions = props.definitions ?? SERVICE_DEFINITIONS;

    const indexPlan = planIndexes(config.deployedIndexes);
    this.data = new DataTables(this, 'Data', { indexes: indexPlan.indexes });
    if (indexPlan.pending.length > 0) {
      // Not an error: this deploy is a right step. The operator (or `npm run deploy`) deploys again.
      Annotations.of(this).addWarningV2(
        'embed-session:pending-indexes',
        `${indexPlan.pending.length} table index change(s) come in later deploys (${indexPlan.pending
          .map(describeChange)
          .join(
            ', ',
          )}): CloudFormation adds or deletes one index per table and update. Use \`npm run deploy\`, which deploys again until none is pending (docs/operations.md, "Upgrading a deployed stack").`,
      );
    }
    this.idTokenKeys = new IdTokenKeys(this, 'IdTokenKeys', { aliasPrefix: this.stackName });
    this.webhooks = new Webhooks(this, 'Webhooks', { aliasPrefix: this.stackName });
    const keys = { keyring: this.idTokenKeys.keyringKey, webhookSecret: this.webhooks.secretKey };
    this.events = new EventPipeline(this, 'Events');
    const environment: ServiceFunctionProps['environment'] = {
      ...functionEnvironment(config),
      ID_TOKEN_KEYRING_KEY: keys.keyring.keyArn,
      WEBHOOK_SECRET_KEY: keys.webhookSecret.keyArn,
      EVENT_BUS_NAME: this.events.bus.eventBusName,
      WEBHOOK_DELIVERY_QUEUE_URL: this.events.queues.webhookDeliveries.queueUrl,
    };
    this.functions = new ServiceFunctions(this, 'Functions', {
      definitions,
      tables: this.data.tables,
      environment,
      logRetention: config.logRetentionDays,
      keys,
      provisionedConcurrency: { embedPage: config.embedPageProvisionedConcurrency },
    });
    this.api = new EmbedApi(this, 'Api', { config, definitions, functions: this.functions });
    // Who may call the provisioning API: attach this policy to the role of the operator's backend.
    this.provisioningCallerPolicy =
      this.api.provisioningMethods.length > 0
        ? new ManagedPolicy(this, 'ProvisioningCallerPolicy', {
            description: `May call the provisioning API (/admin/...) of embed-session-${config.stageName}`,
            statements: [
              new PolicyStatement({
                actions: ['execute-api:Invoke'],
                resources: this.api.provisioningMethods.map((method) => method.methodArn),
              }),
            ],
          })
        : undefined;
    if (this.provisioningCallerPolicy) {
      // A path parameter of a method ARN is `*`: the policy names each provisioning method, and no other.
      const logicalId = (construct: IConstruct) =>
        this.resolve(this.getLogicalId(construct.node.defaultChild as CfnElement)) as string;
      const api = logicalId(this.api.restApi);
      const stage = logicalId(this.api.restApi.deploymentStage);
      Validations.of(this.provisioningCallerPolicy).acknowledge(
        ...definitions.routes
          .filter((route) => route.auth === 'iam' && route.path.includes('{'))
          .map((route) => ({
            id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${api}>/<${stage}>/${route.method}${route.path.replace(/\{\w+\}/g, '*')}]`,
            reason:
              'One provisioning method of this stage; its `*` segments stand for its path parameters (an ' +
              'organization, a board, a user, a key id), which the operator’s backend must be free to name.',
          })),
      );
    }
    this.background = new ServiceFunctions(this, 'Background', {
      definitions: { functions: BACKGROUND_FUNCTIONS, routes: [], authorizer: '' },
      tables: this.data.tables,
      environment: {
        ...environment,
        // The issuer of back-channel logout tokens, which must be the ID token's: the public base URL,
        // else the API's stage URL, which is what the embed page derives from its requests then.
        PUBLIC_BASE_URL: config.publicBaseUrl ?? this.api.restApi.url,
      },
      logRetention: config.logRetentionDays,
      keys,
    });
    for (const [name, definition] of Object.entries(BACKGROUND_FUNCTIONS)) {
      this.events.connect(this.background.get(name), definition, this.data.tables.sessions);
    }
    this.monitoring = new Monitoring(this, 'Monitoring', {
      definitions,
      background: { definitions: BACKGROUND_FUNCTIONS, functions: this.background },
      events: this.events,
      stage: this.api.restApi.deploymentStage,
      stageName: config.stageName,
      functions: this.functions,
      tables: this.data.tables,
      alarmEmail: config.alarmEmail,
    });
    this.dashboard = config.dashboard
      ? new ServiceDashboard(this, 'Dashboard', {
          stageName: config.stageName,
          apiName: this.api.restApi.restApiName,
          routes: definitions.routes,
          functions: [this.functions, this.background],
          events: this.events,
          streamConsumer: this.background.get('sessionStream'),
        })
      : undefined;

    const output = (id: keyof typeof OUTPUTS, value: string) =>
      new CfnOutput(this, id, { value, description: OUTPUTS[id] });
    output('ApiUrl', this.api.restApi.url);
    // restApi.url ends with a slash.
    output(
      'EmbedBaseUrl',
      config.publicBaseUrl ? `${config.publicBaseUrl}/embed` : `${this.api.restApi.url}embed`,
    );
    output('IdTokenKeyringKeyAlias', this.idTokenKeys.keyringAlias.aliasName);
    output('Region', Aws.REGION);
    for (const [key, table] of Object.entries(this.data.tables) as [
      TableKey,
      DataTables['tables'][TableKey],
    ][]) {
      new CfnOutput(this, `${constructId(key)}TableName`, {
        value: table.tableName,
        description: `${TABLES[key].envVar} for the admin CLI`,
      });
    }
    if (this.api.usagePlan) output('UsagePlanId', this.api.usagePlan.usagePlanId);
    if (this.provisioningCallerPolicy)
      output('ProvisioningCallerPolicyArn', this.provisioningCallerPolicy.managedPolicyArn);
    output('EventBusName', this.events.bus.eventBusName);
    output('CutoffRecordCopies', String(CUTOFF_COPIES));
    output('WebhookDeadLetterQueueUrl', this.events.deliveryDeadLetters.queueUrl);
    output('StreamFailureQueueUrl', this.events.streamFailures.queueUrl);
    output('AlarmTopicArn', this.monitoring.topic.topicArn);
    if (this.api.domainName) {
      new CfnOutput(this, 'CustomDomainTarget', {
        value: this.api.domainName.domainNameAliasDomainName,
        description: `Point a CNAME (or alias record) for ${config.customDomain?.domainName} at this name`,
      });
    }
  }
}

/** The stack's outputs (besides the table names and the custom domain's target), and what each is for. */
const OUTPUTS = {
  ApiUrl: 'Base URL of the API (stage URL)',
  EmbedBaseUrl: 'Embed page address; embed URLs add ?token=<session token>',
  IdTokenKeyringKeyAlias:
    'KMS alias of the key that encrypts the ID token keyring (the keys that sign ID tokens and logout tokens)',
  Region: 'AWS_REGION for the admin CLI',
  UsagePlanId: 'USAGE_PLAN_ID for the admin CLI: the default per-key rate limit, and the API and stage',
  ProvisioningCallerPolicyArn:
    'Attach to the IAM role of your backend to let it call the provisioning API (/admin/...) with SigV4',
  EventBusName: 'EventBridge bus of the session events (source embed-sessions); route them with rules',
  WebhookDeadLetterQueueUrl: 'Webhook delivery messages that failed to be handled five times',
  StreamFailureQueueUrl: 'Sessions stream batches whose retries ran out (their events were not recorded)',
  AlarmTopicArn: 'SNS topic of the alarms; subscribe to be notified',
  CutoffRecordCopies:
    'Copies each revocation cut-off record is kept in; npm run deploy reads it to tell a stage deployed before copies',
} as const;

/**
 * LOG_LEVEL and the configured optional settings; each function receives the settings its definition
 * names, and the names of the tables it may use.
 */
function functionEnvironment(config: InfraConfig): ServiceFunctionProps['environment'] {
  const environment: ServiceFunctionProps['environment'] = { LOG_LEVEL: config.logLevel };
  if (config.publicBaseUrl) environment.PUBLIC_BASE_URL = config.publicBaseUrl;
  // The embed page's CSP frame-ancestors; unset, the function's own default (any https site) applies.
  if (config.allowedEmbedOrigins.length > 0) environment.EMBED_FRAME_ANCESTORS = config.frameAncestors;
  if (config.metadataMaxBytes !== undefined) environment.METADATA_MAX_BYTES = String(config.metadataMaxBytes);
  if (config.boardAppUrl !== undefined) environment.BOARD_APP_URL = config.boardAppUrl;
  // The provisioning function finds the stage's default usage plan by this name (EmbedApi names it so).
  environment.USAGE_PLAN_NAME = defaultUsagePlanName(config.stageName);
  // The authorizer paces its last-use writes by the cache period API Gateway applies to it.
  environment.AUTHORIZER_CACHE_TTL_SECONDS = String(config.authorizerCacheTtlSeconds);
  if (config.maxSessionLifetimeSeconds !== undefined)
    environment.MAX_SESSION_LIFETIME_SECONDS = String(config.maxSessionLifetimeSeconds);
  return environment;
}
