/**
 * Create-session fields that carry markup in every place a user-supplied value reaches the embed page:
 * a script element, an attribute break-out, an image with a handler, and a script close inside JSON.
 * Rendered right, each shows as text and none makes an element.
 */
export const MARKUP_FIELDS = {
  firstName: '<script>alert(1)</script>',
  lastName: '"><img src=x onerror=alert(1)>',
  plan: '<img src=x onerror=alert(2)>',
  metadata: { note: '</script><script>alert(3)</script>' },
} as const;
