// The compose stack's one-shot seed job: `node dist/scripts/seed.js` in the
// image, `npm run seed` here. Reads the same WORDPRESS_DB_* (or DATABASE_URL)
// and table prefix variables as the service, with an account that may write.
//
// 1. Waits up to two minutes for the database (and for WordPress, below).
// 2. WordPress not installed yet and WORDPRESS_INSTALL_URL set: runs WordPress's
//    own installer (the form of wp-admin/install.php, as a person would), with
//    SEED_ADMIN_USER, SEED_ADMIN_PASSWORD, SEED_ADMIN_EMAIL and SEED_SITE_TITLE.
// 3. Creates the plugin's tables when missing and loads the demo data of
//    `npm run demo` (DEMO_SITE: SEED_BOOKINGS bookings, default 20,000, and the
//    showcase week of availability/), unless there are
//    bookings already. Exits 0 when seeded or already seeded.
import axios from 'axios'
import { loadConfig, ConfigError, type Config } from '../server/config.ts'
import { readSeedState, writeDemoData } from '../db/seed.ts'
import { DEMO_DEFAULTS, DEMO_SITE } from '../db/demo-data.ts'

const say = (line: string) => process.stdout.write(`[seed] ${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

class SeedError extends Error {}

const RETRY_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'PROTOCOL_CONNECTION_LOST', 'ECONNABORTED'])

/** Runs `attempt` until it stops failing with a connection error, for up to two minutes. */
async function patiently<T>(what: string, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 120_000
  for (;;) {
    try {
      return await attempt()
    } catch (error) {
      const code = (error as { code?: string }).code ?? ''
      if (!RETRY_CODES.has(code) || Date.now() > deadline) throw error
      say(`waiting for ${what} (${code})`)
      await sleep(1_000)
    }
  }
}

/** wp-admin/install.php, step 2: what the installer's form sends. */
async function installWordPress(url: string): Promise<void> {
  const env = process.env
  const password = env.SEED_ADMIN_PASSWORD?.trim()
  if (!password) throw new SeedError('SEED_ADMIN_PASSWORD must be set to install WordPress: the password of its first administrator.')
  const form = new URLSearchParams({
    weblog_title: env.SEED_SITE_TITLE?.trim() || 'Booking calendar demo',
    user_name: env.SEED_ADMIN_USER?.trim() || 'admin',
    admin_password: password,
    admin_password2: password,
    pw_weak: 'on',
    admin_email: env.SEED_ADMIN_EMAIL?.trim() || 'admin@example.com',
    blog_public: '0',
    language: '',
  })
  const res = await patiently(`WordPress at ${url}`, () => axios.post(`${url.replace(/\/+$/, '')}/wp-admin/install.php?step=2`, form.toString(), {
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    maxRedirects: 0,
    timeout: 120_000,
    validateStatus: () => true,
    responseType: 'text',
  }))
  if (res.status !== 200 || !String(res.data).includes('Success!')) {
    throw new SeedError(`WordPress's installer at ${url} answered ${res.status} without "Success!"; install it by hand and run the seed again.`)
  }
}

async function seed(config: Config, bookings: number): Promise<void> {
  const { database, tablePrefix: prefix } = config
  let state = await patiently(`the database at ${database.host}:${database.port}`, () => readSeedState(database, prefix))
  if (!state.wordpressInstalled) {
    const url = process.env.WORDPRESS_INSTALL_URL?.trim()
    if (!url) {
      throw new SeedError(`WordPress is not installed in ${database.database} (no siteurl in ${prefix}options): finish its install, or set WORDPRESS_INSTALL_URL for the seed to run it.`)
    }
    say(`installing WordPress through ${url}/wp-admin/install.php`)
    await installWordPress(url)
    state = await readSeedState(database, prefix)
    if (!state.wordpressInstalled) throw new SeedError(`WordPress's installer answered, yet ${prefix}options has no siteurl: check WORDPRESS_TABLE_PREFIX.`)
  }
  if (state.bookings > 0) {
    say(`${database.database} has ${state.bookings.toLocaleString('en')} bookings already: nothing written`)
    return
  }
  const started = Date.now()
  const written = await writeDemoData(database, { ...DEMO_SITE, prefix, bookings })
  say(`${written.toLocaleString('en')} bookings written to ${database.database} (prefix ${prefix}) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

async function main(): Promise<number> {
  try {
    const config = loadConfig()
    const bookingsText = process.env.SEED_BOOKINGS?.trim() || String(DEMO_DEFAULTS.bookings)
    if (!/^\d+$/.test(bookingsText) || Number(bookingsText) < 1 || Number(bookingsText) > 10_000_000) {
      throw new SeedError('SEED_BOOKINGS must be a whole number from 1 to 10000000.')
    }
    await seed(config, Number(bookingsText))
    return 0
  } catch (error) {
    const known = error instanceof ConfigError || error instanceof SeedError
    process.stderr.write(`[seed] ${known ? '' : 'failed: '}${(error as Error).message}\n`)
    return 1
  }
}

process.exit(await main())
