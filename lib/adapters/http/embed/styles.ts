import { createHash } from 'node:crypto';

/**
 * The only stylesheet of the embed pages. It is inline (one request fewer inside someone else's page)
 * and allowed by its hash in the Content-Security-Policy, so no other inline style can apply. The theme
 * comes from `data-theme` on the root (`auto` follows prefers-color-scheme). The content (`.embed`) never
 * stretches to the frame, so the height the page reports to its host is its own, not the frame's.
 */
export const EMBED_CSS = `
:root{color-scheme:light dark;--bg:#f6f7f9;--panel:#fff;--text:#1d2330;--muted:#5d6677;--line:#e3e6eb;--accent:#4f46e5;--accent-soft:#eef0ff}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--bg:#12151b;--panel:#1b2029;--text:#e8ebf1;--muted:#a1aabb;--line:#2c3340;--accent:#8b87ff;--accent-soft:#262a47}}
:root[data-theme=dark]{color-scheme:dark;--bg:#12151b;--panel:#1b2029;--text:#e8ebf1;--muted:#a1aabb;--line:#2c3340;--accent:#8b87ff;--accent-soft:#262a47}
:root[data-theme=light]{color-scheme:light}
*{box-sizing:border-box}
html{background:var(--bg)}
body{margin:0;min-height:100vh;display:grid;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;background:var(--bg);color:var(--text)}
.embed{min-width:0;align-self:start}
.embed.notice-page{align-self:center}
.bar{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:8px 12px;padding:10px 16px;background:var(--panel);border-bottom:1px solid var(--line)}
.board-name{flex:1 1 12rem;min-width:0;margin:0;font-size:1.05rem;font-weight:650;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.user{display:flex;align-items:center;gap:8px;min-width:0;max-width:100%}
.user-label{flex:none;color:var(--muted);font-size:.8rem;white-space:nowrap}
.avatar{position:relative;overflow:hidden;width:32px;height:32px;border-radius:50%;flex:none;background:var(--accent-soft)}
.avatar-image{position:absolute;inset:0;width:100%;height:100%;object-fit:cover}
.initials{display:inline-flex;align-items:center;justify-content:center;color:var(--accent);font-weight:700;font-size:.85rem}
.user-name{min-width:0;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:28ch}
.plan{flex:none;max-width:14ch;overflow:hidden;text-overflow:ellipsis;font-size:.75rem;padding:2px 8px;border-radius:999px;background:var(--accent-soft);color:var(--accent);font-weight:600;white-space:nowrap}
.board{padding:16px}
.empty{background:var(--panel);border:1px dashed var(--line);border-radius:10px;padding:24px 16px;text-align:center}
.empty h2{margin:0 0 4px;font-size:1rem}
.empty p{margin:0;color:var(--muted);font-size:.9rem}
.meta{margin:0;padding:0 16px 14px;color:var(--muted);font-size:.8rem}
.notice{margin:0 auto;max-width:420px;padding:32px 24px;text-align:center}
.notice h1{font-size:1.25rem;margin:0 0 8px}
.notice p{margin:0;color:var(--muted)}
@media (max-width:480px){.bar{padding:8px 12px}.board-name{flex-basis:100%}.user-label{display:none}.board{padding:12px}.meta{padding:0 12px 12px}}
`.trim();

/** CSP source allowing exactly EMBED_CSS. */
export const EMBED_CSS_HASH = `'sha256-${createHash('sha256').update(EMBED_CSS).digest('base64')}'`;
