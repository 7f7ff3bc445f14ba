import { type App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readInfraConfig } from './config';
import { EmbedSessionStack } from './stack';

/**
 * Adds the service to a CDK app exactly as `cdk synth` builds it (`infra/app.ts`): one stack per stage,
 * tagged, with cdk-nag's AwsSolutions pack. Scripts that synthesize in-process (the template linter, the
 * assembly runner) call this too, so what they check is what `cdk deploy` ships.
 */
export function defineServiceApp(app: App): EmbedSessionStack {
  const config = readInfraConfig((key) => app.node.tryGetContext(key));

  // No `env`: the stack is environment-agnostic, so synthesis needs neither credentials nor lookups;
  // `cdk deploy` takes the account and region from the caller's AWS profile.
  const stack = new EmbedSessionStack(app, `EmbedSessionService-${config.stageName}`, {
    config,
    description: `Embed session service (${config.stageName})`,
  });
  // Not on the dashboard: CloudFormation takes tags there, but the template linter's resource spec does
  // not know them yet; its name (`embed-session-<stage>`) says the same.
  const untagged = { excludeResourceTypes: ['AWS::CloudWatch::Dashboard'] };
  Tags.of(stack).add('service', 'embed-session', untagged);
  Tags.of(stack).add('stage', config.stageName, untagged);

  // The same cdk-nag pack as the tests, so an unsuppressed finding also fails `cdk synth`.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
