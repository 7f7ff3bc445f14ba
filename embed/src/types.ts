import type { EmbedErrorCode } from './runtime.js';

export type { EmbedErrorCode };

/** What `onReady` receives: the ids of the session and board shown, and the board's height in CSS pixels. */
export interface ReadyDetail {
  sessionId?: string;
  boardId?: string;
  height?: number;
}

/**
 * What `onError` receives. `code` is one of `EMBED_ERROR_CODES` (a newer service may add codes: handle
 * any other string as a failure too); `message` says what happened and what to check, for developers;
 * `height` is the error page's height when the frame reported it.
 */
export interface ErrorDetail {
  code: EmbedErrorCode | (string & {});
  message: string;
  height?: number;
}

/** The options every mount takes besides its link. */
export interface CommonMountOptions {
  /** `"auto"` (default): the frame takes the board's height and follows it; or a fixed number of pixels. */
  height?: 'auto' | number;
  /** The iframe's accessible title (default `Board`). */
  title?: string;
  /**
   * How long the frame may take to say anything (ready or an error) before `onError` with
   * `ready_timeout`, in milliseconds; counted from when the frame comes into view. Default 15000.
   */
  readyTimeout?: number;
  /** Once per mount, when the board is first shown (a renewed board does not say it again). */
  onReady?: (detail: ReadyDetail) => void;
  /** Whenever the board's height changes. */
  onResize?: (height: number) => void;
  /** The session ended and nothing replaces it (no `fetchEmbedUrl`, or its renewal failed). */
  onExpired?: () => void;
  /** The session was revoked (at load or while shown); it is never renewed. */
  onRevoked?: () => void;
  /** The frame cannot show the board, or a renewal failed: `code`, `message`, `height`. */
  onError?: (detail: ErrorDetail) => void;
}

/**
 * Your backend's route for a new `embedUrl`, asked before the session ends and when it ended: resolve
 * with the new link, or reject (or throw) when there is none. It may be asked again after a failure,
 * with back-off; frames and tabs of your origin holding the same session ask it once between them.
 */
export type FetchEmbedUrl = () => string | Promise<string>;

/** `mount`'s options: the session's `embedUrl`, or `fetchEmbedUrl` to get it (and renew it), or both. */
export type MountOptions = CommonMountOptions &
  ({ url: string; fetchEmbedUrl?: FetchEmbedUrl } | { url?: undefined; fetchEmbedUrl: FetchEmbedUrl });

/** What `mount` returns. */
export interface EmbedHandle {
  /** The frame shown: a renewal replaces it; null until `fetchEmbedUrl` gave the first link. */
  readonly iframe: HTMLIFrameElement | null;
  /** Removes the frames and stops listening and renewing. Calling it again does nothing. */
  destroy(): void;
}

/** The object `/embed.js` defines as `window.EmbedSession`. */
export interface EmbedSessionApi {
  mount(target: string | Element, options: MountOptions): EmbedHandle;
}
