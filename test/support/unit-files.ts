import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * What mocks an AWS client: aws-sdk-client-mock, directly or through the support modules built on it. It
 * replaces `send` on the client's class for the whole process, so a file that forgets to restore it would
 * answer the calls of every file after it in a shared process.
 */
const MOCKS_AWS = /aws-sdk-client-mock|#test\/support\/(dynamo-mock|sqs-mock|harness)'/;

/** Whether a test file's source mocks an AWS client. */
export function mocksAwsClient(source: string): boolean {
  return MOCKS_AWS.test(source);
}

/** The unit test files, relative to the repository root. */
export function unitTestFiles(dir = join(ROOT, 'test', 'unit')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return unitTestFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The unit test files that mock an AWS client: each runs in a process of its own (vitest.config.ts). */
export function unitFilesMockingAws(): string[] {
  return unitTestFiles().filter((file) => mocksAwsClient(readFileSync(join(ROOT, file), 'utf8')));
}
