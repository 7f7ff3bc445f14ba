import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { synthesize } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1234-5678-9abc-def012345678';

const synth = useSynthesized();

/** Findings as `rule at construct path`, so a failure names what to fix. */
function findings(scope: IConstruct): string[] {
  const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(scope);
  return report.violations.flatMap((violation) =>
    violation.violatingResources.map(
      (r) => `${violation.severity} ${violation.ruleName} at ${r.constructPath}`,
    ),
  );
}

/** Every acknowledgment in the tree as [construct path, rule, reason]. */
function acknowledgments(scope: IConstruct): [string, string, string][] {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(
          // aws-cdk-lib stores the ids with an `Annotation::` prefix; cdk-nag strips it the same way.
          ([rule, reason]) =>
            [construct.node.path, rule.replace(/^annotation::/i, ''), reason] as [string, string, string],
        ),
      ),
  );
}

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged error or warning', () => {
    expect(findings(synth.app)).toEqual([]);
  });

  it('reports none with a custom domain and an alarm e-mail either', () => {
    const variant = synthesize({
      context: {
        customDomainName: 'api.example.com',
        certificateArn: CERTIFICATE_ARN,
        alarmEmail: 'ops@example.com',
      },
    });
    try {
      expect(findings(variant.app)).toEqual([]);
    } finally {
      variant.dispose();
    }
  });

  it('gives every acknowledgment a specific reason', () => {
    const all = acknowledgments(synth.app);
    expect(all.length).toBeGreaterThan(0);
    for (const [path, rule, reason] of all) {
      expect(rule, path).toMatch(/^AwsSolutions-[A-Z]+\d+/);
      expect(reason.length, `${rule} at ${path}`).toBeGreaterThanOrEqual(50);
    }
    // A blanket suppression would repeat one reason for many resources: the open routes each say which.
    const routeReasons = all
      .filter(([path, rule]) => rule === 'AwsSolutions-APIG4' && path.endsWith('/GET'))
      .map(([, , reason]) => reason);
    expect(routeReasons.length).toBeGreaterThan(1);
    expect(new Set(routeReasons).size).toBe(routeReasons.length);
  });

  it('acknowledges only API Gateway rules, the logging role policy, the stream failure queue having no DLQ of its own, and the wildcards of API Gateway resources, never a Lambda, DynamoDB or other IAM finding', () => {
    const rules = [...new Set(acknowledgments(synth.app).map(([, rule]) => rule))].sort();
    const iam5 = rules.filter((rule) => rule.startsWith('AwsSolutions-IAM5'));
    expect(rules.filter((rule) => !iam5.includes(rule))).toEqual([
      'AwsSolutions-APIG2',
      'AwsSolutions-APIG4',
      'AwsSolutions-APIG6',
      'AwsSolutions-COG4',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'AwsSolutions-SQS3',
    ]);
    // Wildcards only where API Gateway names what a path parameter or a drawn id stands for: the
    // provisioning methods a backend may invoke, the API keys, usage plan keys and revoked keys' own
    // usage plans the provisioning API manages, and the usage plan keys the authorizer adds for keys issued before usage plans.
    for (const rule of iam5) {
      expect(rule).toMatch(
        /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:(execute-api:<AWS::Region>:<AWS::AccountId>:<\w+>\/<\w+>\/(GET|PUT|POST|DELETE)\/admin\/[a-z{}*/-]+|apigateway:<AWS::Region>::\/(apikeys\/\*|usageplans\/\*(\/keys)?))\]$/,
      );
    }
    const iam5Found = acknowledgments(synth.app).filter(([, rule]) => iam5.includes(rule));
    for (const [path] of iam5Found)
      expect(path).toMatch(/\/(ProvisioningCallerPolicy|Functions\/(Provisioning|Authorizer)\/Role)$/);
    expect(iam5Found.filter(([path]) => path.endsWith('/Authorizer/Role')).map(([, rule]) => rule)).toEqual([
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/keys]',
    ]);
    const sqs3 = acknowledgments(synth.app).filter(([, rule]) => rule === 'AwsSolutions-SQS3');
    expect(sqs3.map(([path]) => path)).toEqual([expect.stringMatching(/\/Events\/StreamFailures$/)]);
  });

  it('acknowledges the missing authorizer method by method, not for the whole API', () => {
    const apig4 = acknowledgments(synth.app).filter(([, rule]) => rule === 'AwsSolutions-APIG4');
    for (const [path] of apig4) expect(path).toMatch(/\/(GET|HEAD|ANY)$/);
    for (const [path, , reason] of apig4.filter(([p]) => /\/(GET|HEAD)$/.test(p))) {
      expect(reason).toContain(path.split('/Default')[1]?.replace(/\/(GET|HEAD)$/, ''));
    }
  });
});
