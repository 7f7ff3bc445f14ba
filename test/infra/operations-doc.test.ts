/**
 * docs/operations.md says what the stack deploys as `cdk.json` configures it; this synthesizes that stack
 * and counts, so a table, function, key or alarm added without the page following fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#infra/constructs/service-function';
import { resources } from '#test/support/infra';
import { useSynthesized } from '#test/support/synthesized';

const PAGE = readFileSync(join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
const synth = useSynthesized();

/** The count the page gives in bold before `what`, as in "**7** DynamoDB tables". */
function stated(what: string): number {
  const match = new RegExp(`\\*\\*(\\d+)\\*\\*\\s+${what.replaceAll(' ', '\\s+')}`).exec(PAGE);
  if (!match) throw new Error(`docs/operations.md states no count of ${what}`);
  return Number(match[1]);
}

describe('docs/operations.md, what the stack deploys', () => {
  it.each([
    ['DynamoDB tables', 'AWS::DynamoDB::Table'],
    ['Lambda functions', 'AWS::Lambda::Function'],
    ['KMS keys', 'AWS::KMS::Key'],
    ['SQS queues', 'AWS::SQS::Queue'],
    ['CloudWatch alarms', 'AWS::CloudWatch::Alarm'],
    ['dashboard', 'AWS::CloudWatch::Dashboard'],
  ])('states the number of %s the synthesized template holds', (what, type) => {
    expect(stated(what)).toBe(Object.keys(resources(synth.template, type)).length);
  });

  it('states the alarm count again where it prices them', () => {
    expect(PAGE).toContain(`costs are small: ${stated('CloudWatch alarms')} CloudWatch alarms`);
  });
});
