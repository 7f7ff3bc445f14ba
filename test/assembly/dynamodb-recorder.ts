import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardTo, sendAnswer } from '#test/support/upstream';
import { type Check, checksFor, type Decision, evaluate } from './iam';
import type { Json } from './template';

/** A caller: a function, and the statements of its execution role. */
export interface Principal {
  function: string;
  statements: readonly Json[];
}

export interface RecordedCall {
  function: string;
  operation: string;
  checks: (Check & { decision: Decision })[];
}

export interface DynamoRecorder {
  /** Where each function sends its DynamoDB calls, by the principals' keys. */
  endpoints: ReadonlyMap<string, string>;
  /** Every call, in order. */
  readonly calls: RecordedCall[];
  /** The calls IAM would have refused (they were answered with AccessDeniedException). */
  denied(): RecordedCall[];
  close(): Promise<void>;
}

/**
 * A recording proxy in front of DynamoDB, one endpoint per function (the service's client signs every
 * call with the same local credentials once it is given an endpoint, so the endpoint is what tells callers
 * apart): it works out the authorizations IAM would perform for each call, evaluates them against that
 * function's execution-role statements, and either forwards the call or answers `AccessDeniedException`
 * as DynamoDB would. Every call is recorded.
 */
export async function startDynamoRecorder(options: {
  target: string;
  principals: ReadonlyMap<string, Principal>;
  tableArn: (name: string) => string;
}): Promise<DynamoRecorder> {
  const target = new URL(options.target);
  const calls: RecordedCall[] = [];
  const servers: Server[] = [];
  const endpoints = new Map<string, string>();
  for (const [key, principal] of options.principals) {
    const server = listener(principal);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
    endpoints.set(key, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  return {
    endpoints,
    calls,
    denied: () => calls.filter((call) => call.checks.some((c) => c.decision !== 'allow')),
    close: async () => {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };

  function listener(principal: Principal): Server {
    return createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
        const refuse = (type: string, message: string) => {
          res.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.0' });
          res.end(JSON.stringify({ __type: `com.amazon.coral.service#${type}`, message }));
        };
        let checks: RecordedCall['checks'];
        try {
          checks = checksFor(operation, JSON.parse(body.toString('utf8') || '{}'), options.tableArn).map(
            (check) => ({ ...check, decision: evaluate(principal.statements, check) }),
          );
        } catch (error) {
          // What cannot be evaluated is refused: the run fails closed.
          checks = [
            {
              action: `dynamodb:${operation}`,
              resource: `(${(error as Error).message})`,
              context: {},
              decision: 'implicit-deny',
            },
          ];
        }
        calls.push({ function: principal.function, operation, checks });
        const denied = checks.find((check) => check.decision !== 'allow');
        if (denied) {
          refuse(
            'AccessDeniedException',
            `User: ${principal.function} is not authorized to perform: ${denied.action} on resource: ${denied.resource} because ${denied.decision === 'explicit-deny' ? 'an explicit deny' : 'no identity-based policy allows the action'}`,
          );
          return;
        }
        forwardTo(target, req, body).then(
          (answer) => sendAnswer(res, answer),
          () => res.destroy(),
        );
      });
    });
  }
}
