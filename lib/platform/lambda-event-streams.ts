/**
 * Stands in for `@smithy/core/event-streams` in the Lambda bundles only (infra/bundling.ts).
 *
 * The SDK's HTTP protocol imports the event-stream codec (with CRC32 checksums and `node:zlib`) only when
 * an operation has an event-stream member; DynamoDB has none, so no request of ours ever loads it. Bundled
 * into one file, though, that lazy import is 15 KB every cold start parses and `node:zlib` loaded before
 * the first line runs. This module keeps the two names the protocol reads, failing with the reason should
 * a future client ever reach them.
 */

/** Why the Lambda bundles cannot read or write an event stream. */
export const NO_EVENT_STREAMS_MESSAGE =
  'Event streams are not bundled: DynamoDB has no event-stream operation, so infra/bundling.ts ' +
  'replaces @smithy/core/event-streams in the Lambda bundles.';

function unsupported(): never {
  throw new Error(NO_EVENT_STREAMS_MESSAGE);
}

/** As the package's serde, which the protocol builds only for an event-stream member. */
export class EventStreamSerde {
  constructor() {
    unsupported();
  }
}

/** As the package's provider of an event-stream marshaller. */
export const eventStreamSerdeProvider = (): never => unsupported();
