// The KMS client as the Lambda bundles import it (infra/bundling.ts aliases `@aws-sdk/client-kms` here):
// only the client and the three commands the service sends, by their own modules. Through the package's
// index, which re-exports every command, a lazily loaded import keeps all of them (and their schemas).

export { GenerateMacCommand } from '../../node_modules/@aws-sdk/client-kms/dist-es/commands/GenerateMacCommand.js';
export { GetPublicKeyCommand } from '../../node_modules/@aws-sdk/client-kms/dist-es/commands/GetPublicKeyCommand.js';
export { SignCommand } from '../../node_modules/@aws-sdk/client-kms/dist-es/commands/SignCommand.js';
export { KMSClient } from '../../node_modules/@aws-sdk/client-kms/dist-es/KMSClient.js';
