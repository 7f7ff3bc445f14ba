/**
 * Stands in for `@aws-sdk/middleware-endpoint-discovery` in the Lambda bundles only (infra/bundling.ts).
 *
 * The DynamoDB client resolves endpoint-discovery settings when it is built (and, for that, an LRU
 * endpoint cache from `@aws-sdk/endpoint-cache` and `mnemonist`), but none of its commands adds the
 * discovery middleware (`commandBuilder`'s middleware list is empty in @aws-sdk/client-dynamodb 3.x),
 * so nothing ever reads them: requests go to the regional endpoint whatever AWS_ENABLE_ENDPOINT_DISCOVERY
 * says. This module gives the client the same two exports it imports, without the cache. Should a
 * future client import anything else from the package (the middleware itself), the build fails on the
 * missing export instead of shipping something that behaves differently.
 */

/** The settings the client reads at construction; `DescribeEndpoints` is never sent, so never needed. */
interface DiscoveryInput {
  endpointDiscoveryEnabled?: boolean | undefined;
  endpointDiscoveryEnabledProvider?: () => Promise<boolean | undefined>;
}

/** As the package's: the same configuration keys, minus the endpoint cache no command reads. */
export function resolveEndpointDiscoveryConfig<T extends DiscoveryInput>(
  input: T,
  { endpointDiscoveryCommandCtor }: { endpointDiscoveryCommandCtor: unknown },
) {
  const { endpointDiscoveryEnabled, endpointDiscoveryEnabledProvider } = input;
  return Object.assign(input, {
    endpointDiscoveryCommandCtor,
    endpointDiscoveryEnabled:
      endpointDiscoveryEnabled !== undefined
        ? () => Promise.resolve(endpointDiscoveryEnabled)
        : endpointDiscoveryEnabledProvider,
    isClientEndpointDiscoveryEnabled: endpointDiscoveryEnabled !== undefined,
  });
}

/**
 * The runtime configuration's loader for `endpointDiscoveryEnabledProvider`: it selects nothing, since no
 * command reads the setting; the shared config files are read (or found missing) as for every setting.
 */
export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: (): boolean | undefined => undefined,
  configFileSelector: (): boolean | undefined => undefined,
  default: undefined,
};
