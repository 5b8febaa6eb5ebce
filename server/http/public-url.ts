// API.md, "Links and addresses": the site's public address for Link headers and
// every other absolute URL. PUBLIC_URL when set; else the scheme and host the
// client used, through X-Forwarded-Proto / X-Forwarded-Host only when the peer is
// a trusted proxy (TRUST_PROXY, applied by Express to req.protocol and req.host).
import type { Express, Request } from 'express'

const PUBLIC_URL = 'booking-calendar public url'

/** Makes PUBLIC_URL known to publicBaseUrl(); createApp calls it once. */
export function setPublicUrl(app: Express, publicUrl: string | undefined): void {
  app.set(PUBLIC_URL, publicUrl)
}

// A host name, IPv4 or [IPv6], with an optional port: anything else in a Host
// header is not written into a URL.
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/** `https://shop.example.com` (no trailing slash): what an absolute URL starts with. */
export function publicBaseUrl(req: Request): string {
  const configured = req.app.get(PUBLIC_URL) as string | undefined
  if (configured) return configured
  const host = req.host
  // A proxy's X-Forwarded-Proto is taken for http or https only (`javascript`, `ftp`: http).
  const scheme = req.protocol === 'https' ? 'https' : 'http'
  return `${scheme}://${host && HOST.test(host) ? host : 'localhost'}`
}
