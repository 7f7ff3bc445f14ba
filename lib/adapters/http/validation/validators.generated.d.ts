// Types for the generated standalone validators (see build.ts).
import type { ErrorObject } from 'ajv';

export interface StandaloneValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}
export declare const validateCreateSession: StandaloneValidator;
export declare const validateListSessionsQuery: StandaloneValidator;
export declare const validateRevokeUserSessions: StandaloneValidator;
export declare const validateListEventsQuery: StandaloneValidator;
export declare const validateListWebhooksQuery: StandaloneValidator;
export declare const validateCreateWebhook: StandaloneValidator;
export declare const validateRotateWebhookSecret: StandaloneValidator;
export declare const validatePutBoard: StandaloneValidator;
export declare const validateCreateApiKey: StandaloneValidator;
export declare const validateRevokeApiKey: StandaloneValidator;
export declare const validateListApiKeysQuery: StandaloneValidator;
export declare const validateRemoveMemberQuery: StandaloneValidator;
