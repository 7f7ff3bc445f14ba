import { App } from 'aws-cdk-lib';
import { defineServiceApp } from './service-app';

defineServiceApp(new App());
