'use client';
/**
 * `<EmbeddedBoard>`: a board embedded in a React page, through `@embed-session/embed` (the host script's
 * own logic). The server renders an empty `<div>` (with `className`); the frame is created in an effect,
 * in the browser only, and removed with the component, so StrictMode's mount, unmount and mount again
 * leaves one frame and one listener. The callbacks are always the latest ones given; a new `url` (or
 * `title`, `height`, `readyTimeout`, or going from `url` to `fetchEmbedUrl`) mounts the board again.
 */
import { type CommonMountOptions, type FetchEmbedUrl, type MountOptions, mount } from '@embed-session/embed';
import { createElement, type ReactElement, useEffect, useRef } from 'react';

export type {
  EmbedErrorCode,
  ErrorDetail,
  FetchEmbedUrl,
  ReadyDetail,
} from '@embed-session/embed';
export { EMBED_ERROR_CODES } from '@embed-session/embed';

/** The board's link, or `fetchEmbedUrl` to get it and renew it (or both), and `mount`'s other options. */
export type EmbeddedBoardProps = CommonMountOptions & {
  /** The class of the `<div>` that holds the frame (the frame itself takes its full width). */
  className?: string;
} & ({ url: string; fetchEmbedUrl?: FetchEmbedUrl } | { url?: undefined; fetchEmbedUrl: FetchEmbedUrl });

export function EmbeddedBoard(props: EmbeddedBoardProps): ReactElement {
  const container = useRef<HTMLDivElement>(null);
  const latest = useRef(props);
  useEffect(() => {
    latest.current = props;
  });
  const { url, title, height, readyTimeout } = props;
  const renews = typeof props.fetchEmbedUrl === 'function';
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const options = {
      url,
      title,
      height,
      readyTimeout,
      fetchEmbedUrl: renews ? () => (latest.current.fetchEmbedUrl as FetchEmbedUrl)() : undefined,
      onReady: (detail) => latest.current.onReady?.(detail),
      onResize: (value) => latest.current.onResize?.(value),
      onExpired: () => latest.current.onExpired?.(),
      onRevoked: () => latest.current.onRevoked?.(),
      onError: (detail) => latest.current.onError?.(detail),
    } as MountOptions;
    const handle = mount(element, options);
    return () => handle.destroy();
  }, [url, renews, title, height, readyTimeout]);
  return createElement('div', { ref: container, className: props.className });
}
