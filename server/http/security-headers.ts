// The headers every answer carries, Express's and the raw ones written for a
// request Node's HTTP parser refused (server-setup.ts): fit for a JSON API,
// nothing to sniff, frame, refer or cache.
export const SECURITY_HEADERS: ReadonlyArray<readonly [name: string, value: string]> = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Cache-Control', 'no-store'],
]
