/**
 * `@embed-session/embed`: the host script `/embed.js` as an ES module. Its logic is the very function
 * `/embed.js` runs (dist/runtime.js is written from the service's source, byte for byte), so a page
 * mounting through this package behaves as one mounting through the script tag. Importing it touches no
 * browser global: it is safe to import while rendering on the server; `mount` needs a browser.
 */
import { createEmbedSession, EMBED_ERROR_CODES } from './runtime.js';
import type { EmbedHandle, EmbedSessionApi, MountOptions } from './types.js';

export type {
  CommonMountOptions,
  EmbedErrorCode,
  EmbedHandle,
  EmbedSessionApi,
  ErrorDetail,
  FetchEmbedUrl,
  MountOptions,
  ReadyDetail,
} from './types.js';
export { EMBED_ERROR_CODES };

let session: EmbedSessionApi | undefined;

/**
 * Frames the board in `target` (an element, or a selector that matches one) and returns its handle.
 * Throws a `TypeError` for a target or options it cannot use, and an `Error` outside a browser.
 */
export function mount(target: string | Element, options: MountOptions): EmbedHandle {
  if (typeof window === 'undefined' || typeof document === 'undefined') {
    throw new Error(
      '@embed-session/embed: mount needs a browser; call it once the page runs (an effect), not while rendering on the server',
    );
  }
  session ??= createEmbedSession(window);
  return session.mount(target, options);
}
