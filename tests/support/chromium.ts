// Debian's chromium (installed when missing, as MariaDB and nginx are), driven
// headless through puppeteer-core for the GET docs test: no browser is
// downloaded, only the Debian package is used.
import { existsSync } from 'node:fs'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import { aptInstall } from '../../scripts/apt.ts'

const findChromium = () => ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path))

export function ensureChromiumInstalled(): string {
  if (!findChromium()) aptInstall(['chromium'], 'chromium (for the GET docs test)')
  const binary = findChromium()
  if (!binary) throw new Error('chromium was installed but its binary is still missing')
  return binary
}

export async function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: ensureChromiumInstalled(),
    headless: true,
    // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'],
  })
}

/**
 * Everything the browser reports that a CSP blocked or a script threw, from
 * the moment the page starts: `securitypolicyviolation` events, console errors
 * (Chromium writes "Refused to ..." there), and uncaught exceptions.
 */
export async function watchProblems(page: Page): Promise<string[]> {
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()} (${message.location().url ?? ''})`)
  })
  page.on('pageerror', (error) => { problems.push(`page error: ${String(error)}`) })
  await page.exposeFunction('__reportViolation', (text: string) => { problems.push(`csp: ${text}`) })
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { __reportViolation(text: string): void }).__reportViolation(`${event.violatedDirective} blocked ${event.blockedURI}`)
    })
  })
  return problems
}
