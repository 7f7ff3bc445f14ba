import { describe, expect, it } from 'vitest';
import { assemblyApi, type CloudAssembly, Resolver, roleStatements } from './template';

const assembly = (resources: Record<string, unknown>): CloudAssembly => ({
  dir: '/nowhere',
  stackName: 'Stack',
  template: { Resources: resources },
});

describe('intrinsic functions resolved to local values', () => {
  const tables = assembly({
    Sessions: { Type: 'AWS::DynamoDB::Table', Properties: {} },
    Named: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 'given-name' } },
  });
  const resolver = new Resolver(tables, { region: 'eu-west-1', accountId: '123456789012', partition: 'aws' });

  it('names a resource as CloudFormation would: its own name, else stack and logical id', () => {
    expect(resolver.resolve({ Ref: 'Sessions' })).toBe('Stack-Sessions');
    expect(resolver.resolve({ Ref: 'Named' })).toBe('given-name');
  });

  it('builds ARNs and joins, splits, selects and substitutes as CloudFormation does', () => {
    const arn = resolver.resolve({ 'Fn::GetAtt': ['Sessions', 'Arn'] });
    expect(arn).toBe('arn:aws:dynamodb:eu-west-1:123456789012:table/Stack-Sessions');
    expect(resolver.resolve({ 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Sessions', 'Arn'] }, '/index/i']] })).toBe(
      `${arn}/index/i`,
    );
    expect(resolver.resolve({ 'Fn::Select': [3, { 'Fn::Split': [':', arn] }] })).toBe('eu-west-1');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Fn::Sub's own placeholders.
    expect(resolver.resolve({ 'Fn::Sub': 'x-${AWS::Region}-${Sessions}-${Named.Arn}' })).toBe(
      'x-eu-west-1-Stack-Sessions-arn:aws:dynamodb:eu-west-1:123456789012:table/given-name',
    );
  });

  it('refuses what it cannot resolve rather than guess', () => {
    expect(() => resolver.resolve({ 'Fn::ImportValue': 'x' })).toThrow(/not supported/);
    expect(() => resolver.resolve({ Ref: 'Missing' })).toThrow(/no resource Missing/);
  });
});

describe('a role’s statements', () => {
  it('gathers the inline and the attached policies of the role, resolved', () => {
    const template = assembly({
      T: { Type: 'AWS::DynamoDB::Table', Properties: {} },
      R: {
        Type: 'AWS::IAM::Role',
        Properties: {
          Policies: [{ PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 'a:A', Resource: '*' }] } }],
        },
      },
      P: {
        Type: 'AWS::IAM::Policy',
        Properties: {
          Roles: [{ Ref: 'R' }],
          PolicyDocument: {
            Statement: [
              { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: { 'Fn::GetAtt': ['T', 'Arn'] } },
            ],
          },
        },
      },
      Other: {
        Type: 'AWS::IAM::Policy',
        Properties: {
          Roles: [{ Ref: 'X' }],
          PolicyDocument: { Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] },
        },
      },
    });
    const statements = roleStatements(template, new Resolver(template), 'R');
    expect(statements.map((s: { Action: string }) => s.Action)).toEqual(['a:A', 'dynamodb:GetItem']);
    expect(statements[1].Resource).toMatch(/:table\/Stack-T$/);
  });
});

describe('the REST API of a template', () => {
  it('refuses an authorizer that is not TOKEN rather than emulate it wrongly', () => {
    const template = assembly({
      Api: { Type: 'AWS::ApiGateway::RestApi', Properties: {} },
      Auth: {
        Type: 'AWS::ApiGateway::Authorizer',
        Properties: { RestApiId: { Ref: 'Api' }, Type: 'REQUEST' },
      },
    });
    expect(() => assemblyApi(template, new Resolver(template))).toThrow(/TOKEN/);
  });
});
