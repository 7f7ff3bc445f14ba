import { describe, expect, it } from 'vitest';
import { HANDOFF_SCRIPT, handOffHeaders, renderHandOffPage } from '#lib/adapters/http/embed/handoff';
import type { EmbedView } from '#lib/use-cases/open-embed-session';

const view = {
  board: { boardId: 'b"1', orgId: 'o', visibility: 'PUBLIC', name: null },
  session: { id: 'ses_<1>' },
} as unknown as EmbedView;

describe('the hand-off page', () => {
  it('escapes every value it writes into the form', () => {
    const html = renderHandOffPage(view, { url: 'https://app.example.com/?a=1&b="x"', idToken: 'a.b.c' }, {});
    expect(html).toContain('action="https://app.example.com/?a=1&amp;b=&quot;x&quot;"');
    expect(html).toContain('data-board-id="b&quot;1"');
    expect(html).toContain('data-session-id="ses_&lt;1&gt;"');
    expect(html).toContain('<input type="hidden" name="id_token" value="a.b.c">');
  });

  it('announces the app’s origin to the framing page before it submits the form', () => {
    expect(HANDOFF_SCRIPT.indexOf("type: 'handoff'")).toBeGreaterThan(-1);
    expect(HANDOFF_SCRIPT.indexOf("type: 'handoff'")).toBeLessThan(HANDOFF_SCRIPT.indexOf('form.submit()'));
    const html = renderHandOffPage(view, { url: 'https://app.example.com/x', idToken: 'a.b.c' }, {});
    expect(html).toContain('data-app-origin="https://app.example.com"');
  });

  it('allows forms to go to the app’s origin only, whatever its path', () => {
    const csp =
      handOffHeaders("'self'", 'https://app.example.com:8443/board?x=1')['Content-Security-Policy'] ?? '';
    expect(csp.split('; ')).toContain('form-action https://app.example.com:8443');
    expect(csp).not.toContain('/board');
  });
});
