import nodeProcess, * as nodeProcessModule from 'node:process';
import * as nodeStreamWeb from 'node:stream/web';
import * as realEventStreams from '@smithy/core/event-streams';
import { describe, expect, it } from 'vitest';
import * as eventStreams from '#lib/platform/lambda-event-streams';
import lambdaProcess, * as lambdaProcessModule from '#lib/platform/lambda-process';
import * as lambdaStreamWeb from '#lib/platform/lambda-stream-web';

describe('lambda-process (node:process in the Lambda bundles)', () => {
  it('gives the same objects as node:process for every name it exports', () => {
    expect(lambdaProcess).toBe(nodeProcess);
    for (const [name, value] of Object.entries(lambdaProcessModule)) {
      if (name === 'default') continue;
      expect(value, name).toBe((nodeProcessModule as unknown as Record<string, unknown>)[name]);
    }
  });

  it('sees a variable set after it was loaded, as the SDK reads AWS_* settings late', () => {
    process.env.LAMBDA_PROCESS_TEST = 'late';
    try {
      expect(lambdaProcessModule.env.LAMBDA_PROCESS_TEST).toBe('late');
    } finally {
      delete process.env.LAMBDA_PROCESS_TEST;
    }
  });
});

describe('lambda-event-streams (@smithy/core/event-streams in the Lambda bundles)', () => {
  it('exports only names the real @smithy/core/event-streams exports, so a rename upstream fails here', () => {
    const names = Object.keys(eventStreams).filter((name) => name !== 'NO_EVENT_STREAMS_MESSAGE');
    expect(names.sort()).toEqual(['EventStreamSerde', 'eventStreamSerdeProvider']);
    expect(names.filter((name) => !(name in realEventStreams))).toEqual([]);
  });

  it('fails with the reason when an event stream is ever asked for', () => {
    expect(() => new eventStreams.EventStreamSerde()).toThrow(eventStreams.NO_EVENT_STREAMS_MESSAGE);
    expect(() => eventStreams.eventStreamSerdeProvider()).toThrow(eventStreams.NO_EVENT_STREAMS_MESSAGE);
  });
});

describe('lambda-stream-web (node:stream/web in the Lambda bundles)', () => {
  it('exports only names the real node:stream/web exports', () => {
    expect(Object.keys(lambdaStreamWeb).filter((name) => !(name in nodeStreamWeb))).toEqual([]);
  });

  it('answers instanceof as the real ReadableStream does, the only use @middy/core makes of it', () => {
    const stream = new nodeStreamWeb.ReadableStream();
    expect(stream instanceof lambdaStreamWeb.ReadableStream).toBe(true);
    for (const other of [{}, 'body', null, new nodeStreamWeb.WritableStream()]) {
      expect(other instanceof lambdaStreamWeb.ReadableStream).toBe(
        other instanceof nodeStreamWeb.ReadableStream,
      );
    }
  });
});
