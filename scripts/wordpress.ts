// A real WordPress beside a private MariaDB, for the tests and the benchmark:
// Debian's `wordpress` package (installed with php-cli and php-mysql when
// missing), copied to a temporary directory with its own wp-config.php (so
// /etc/wordpress is never touched), served by `php -S` on loopback.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findFreePort } from './mariadb.ts'
import { aptInstall } from './apt.ts'

const WORDPRESS_DIR = '/usr/share/wordpress'

export function ensureWordPressInstalled(): void {
  const hasPhp = spawnSync('php', ['-m'], { encoding: 'utf8' }).stdout?.includes('mysqli')
  if (existsSync(join(WORDPRESS_DIR, 'wp-settings.php')) && hasPhp) return
  aptInstall(['wordpress', 'php-cli', 'php-mysql'], 'WordPress with PHP')
}

export interface WordPressOptions {
  database: { name: string; host: string; port: number; user: string; password: string }
  prefix: string
  /** Must-use plugins, by file name. */
  muPlugins?: Record<string, string>
  /** PHP_CLI_SERVER_WORKERS. */
  workers?: number
  /** php -d settings for the server. */
  ini?: Record<string, string>
}

export interface WordPressServer {
  url: string
  /** The temporary directory (WordPress is in its `wp` folder). */
  dir: string
  /** Runs PHP code with WordPress's files at hand (require `${root}/wp-load.php`); returns what it printed. */
  php(code: string): string
  root: string
  start(): Promise<void>
  stop(): Promise<void>
  /** Stops php -S and removes the copy. */
  close(): Promise<void>
}

export const quotePhp = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

export async function prepareWordPress(options: WordPressOptions): Promise<WordPressServer> {
  ensureWordPressInstalled()
  const dir = mkdtempSync(join(tmpdir(), 'bc-wordpress-'))
  const root = join(dir, 'wp')
  cpSync(WORDPRESS_DIR, root, { recursive: true, dereference: true })
  const port = await findFreePort()
  const url = `http://127.0.0.1:${port}`
  const { database: db } = options
  writeFileSync(join(root, 'wp-config.php'), `<?php
define('DB_NAME', ${quotePhp(db.name)});
define('DB_USER', ${quotePhp(db.user)});
define('DB_PASSWORD', ${quotePhp(db.password)});
define('DB_HOST', '${db.host}:${db.port}');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('WP_HOME', ${quotePhp(url)});
define('WP_SITEURL', ${quotePhp(url)});
define('WP_CONTENT_DIR', ${quotePhp(join(root, 'wp-content'))});
// Application passwords over plain HTTP need a local environment.
define('WP_ENVIRONMENT_TYPE', 'local');
define('AUTH_KEY', 'test'); define('SECURE_AUTH_KEY', 'test'); define('LOGGED_IN_KEY', 'test'); define('NONCE_KEY', 'test');
define('AUTH_SALT', 'test'); define('SECURE_AUTH_SALT', 'test'); define('LOGGED_IN_SALT', 'test'); define('NONCE_SALT', 'test');
define('DISABLE_WP_CRON', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
$table_prefix = ${quotePhp(options.prefix)};
if (!defined('ABSPATH')) define('ABSPATH', __DIR__ . '/');
require_once ABSPATH . 'wp-settings.php';
`)
  // php -S has no .htaccess: send every path that is no file to WordPress. It
  // also ends a body by closing the connection, without Content-Length, which
  // load tools such as autocannon never count as an answer; the REST server has
  // built its whole JSON before echoing it anyway, so the length is added here
  // (at shutdown: rest_api_loaded() ends in die()).
  writeFileSync(join(root, 'router.php'), `<?php
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path !== '/' && is_file(__DIR__ . $path)) return false;
$_SERVER['SCRIPT_NAME'] = '/index.php';
ob_start();
register_shutdown_function(function () {
  $body = '';
  while (ob_get_level() > 0) $body = ob_get_clean() . $body;
  if (!headers_sent()) header('Content-Length: ' . strlen($body));
  echo $body;
});
require __DIR__ . '/index.php';
`)
  mkdirSync(join(root, 'wp-content', 'mu-plugins'), { recursive: true })
  for (const [name, code] of Object.entries(options.muPlugins ?? {})) writeFileSync(join(root, 'wp-content', 'mu-plugins', name), code)

  const php = (code: string) => {
    const file = join(dir, `script-${Date.now()}-${Math.random().toString(36).slice(2)}.php`)
    writeFileSync(file, code)
    const result = spawnSync('php', [file], { encoding: 'utf8', cwd: dir, maxBuffer: 64 * 1024 * 1024 })
    if (result.status !== 0) throw new Error(`php failed: ${result.stdout}\n${result.stderr}`)
    return result.stdout
  }

  let child: ChildProcess | undefined
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return
    const ini = Object.entries(options.ini ?? {}).flatMap(([key, value]) => ['-d', `${key}=${value}`])
    // Its own process group: with PHP_CLI_SERVER_WORKERS the workers hold the socket too.
    child = spawn('php', [...ini, '-S', `127.0.0.1:${port}`, '-t', root, join(root, 'router.php')], {
      stdio: 'ignore', cwd: root, env: { ...process.env, PHP_CLI_SERVER_WORKERS: String(options.workers ?? 2) }, detached: true,
    })
    // A detached group outlives its parent: end it with this process, however that ends.
    const group = child.pid!
    process.once('exit', () => { try { process.kill(-group, 'SIGKILL') } catch { /* already gone */ } })
    const deadline = Date.now() + 15_000
    for (;;) {
      if (await fetch(`${url}/wp-json/`).then((res) => res.ok, () => false)) return
      if (Date.now() > deadline) throw new Error('php -S did not serve WordPress within 15 s')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child!.once('exit', resolve))
    process.kill(-child.pid!, 'SIGKILL')
    await exited
    // The workers are gone once nothing answers on the port.
    const deadline = Date.now() + 5_000
    while (Date.now() < deadline && await fetch(`${url}/wp-json/`).then(() => true, () => false)) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return {
    url, dir, root, php, start, stop,
    close: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** WordPress's own installer, a site in Europe/Berlin with pretty permalinks (/wp-json/). */
export function installSitePhp(root: string): string {
  return `define('WP_INSTALLING', true);
require ${quotePhp(join(root, 'wp-load.php'))};
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
wp_install('Booking test site', 'admin', 'admin@example.com', true, '', 'admin-login-password');
update_option('timezone_string', 'Europe/Berlin');
update_option('permalink_structure', '/%postname%/');
flush_rewrite_rules();
`
}
