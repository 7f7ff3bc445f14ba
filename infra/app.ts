import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readInfraConfig } from './config';
import { EmbedSessionStack } from './stack';

const app = new App();
const config = readInfraConfig((key) => app.node.tryGetContext(key));

// No `env`: the stack is environment-agnostic, so synthesis needs neither credentials nor lookups;
// `cdk deploy` takes the account and region from the caller's AWS profile.
const stack = new EmbedSessionStack(app, `EmbedSessionService-${config.stageName}`, {
  config,
  description: `Embed session service (${config.stageName})`,
});
Tags.of(stack).add('service', 'embed-session');
Tags.of(stack).add('stage', config.stageName);

// The same cdk-nag pack as the tests, so an unsuppressed finding also fails `cdk synth`.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
