import { App } from 'aws-cdk-lib';
import { InfraConfigError } from './config';
import { defineServiceApp } from './service-app';

try {
  defineServiceApp(new App());
} catch (error) {
  // A context value the operator gave is wrong: the message names every problem; a stack trace of our
  // code under it would only bury it. Anything else is a bug and keeps its trace.
  if (!(error instanceof InfraConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
}
