// A real WordPress for the tests (issue 4): Debian's `wordpress` package,
// installed with php-cli and php-mysql when missing, copied to a temporary
// directory with its own wp-config.php, installed into a test database by
// wp_install(), and served by `php -S` on loopback. Its options, users and
// services are written by WordPress itself.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findFreePort } from '../../scripts/mariadb.ts'
import { testServer, type TestDatabase } from './database.ts'

const WORDPRESS_DIR = '/usr/share/wordpress'

export function ensureWordPressInstalled(): void {
  if (existsSync(join(WORDPRESS_DIR, 'wp-settings.php')) && spawnSync('php', ['-m'], { encoding: 'utf8' }).stdout?.includes('mysqli')) return
  if (process.getuid?.() !== 0) throw new Error('WordPress tests need Debian\'s wordpress, php-cli and php-mysql: apt-get install them')
  process.stderr.write('[wordpress] installing Debian\'s wordpress, php-cli and php-mysql (once)\n')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'wordpress', 'php-cli', 'php-mysql']]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env })
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed`)
  }
}

export interface WordPressSite {
  url: string
  /** Application passwords, as `user:password` for HTTP Basic. */
  admin: string
  subscriber: string
  /** Post IDs of the services WordPress created, by the title given. */
  services: Record<string, number>
  /** Makes WordPress sleep (`slow`) or answer 500 (`fail`) on every request, through a mu-plugin. */
  misbehave(how: 'slow' | 'fail' | 'well'): void
  stop(): Promise<void>
  /** Starts php -S again after stop(), on the same port. */
  start(): Promise<void>
  /** Stops php -S and removes the copy of WordPress. */
  close(): Promise<void>
}

function php(code: string, dir: string): string {
  const file = join(dir, `script-${Date.now()}-${Math.random().toString(36).slice(2)}.php`)
  writeFileSync(file, code)
  const result = spawnSync('php', [file], { encoding: 'utf8', cwd: dir })
  if (result.status !== 0) throw new Error(`php failed: ${result.stdout}\n${result.stderr}`)
  return result.stdout
}

const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

export async function startWordPress(db: TestDatabase): Promise<WordPressSite> {
  ensureWordPressInstalled()
  const server = testServer()
  const dir = mkdtempSync(join(tmpdir(), 'bc-wordpress-'))
  const root = join(dir, 'wp')
  cpSync(WORDPRESS_DIR, root, { recursive: true, dereference: true })
  const port = await findFreePort()
  const url = `http://127.0.0.1:${port}`

  // WordPress writes: it gets an account of its own on the test database.
  const dbUser = `wp_${db.name.slice(-20)}`.slice(0, 32)
  await db.admin.query(`CREATE USER ${quote(dbUser)}@'%' IDENTIFIED BY 'wp-password'; GRANT ALL ON \`${db.name}\`.* TO ${quote(dbUser)}@'%'`)
  writeFileSync(join(root, 'wp-config.php'), `<?php
define('DB_NAME', ${quote(db.name)});
define('DB_USER', ${quote(dbUser)});
define('DB_PASSWORD', 'wp-password');
define('DB_HOST', '127.0.0.1:${server.port}');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('WP_HOME', ${quote(url)});
define('WP_SITEURL', ${quote(url)});
define('WP_CONTENT_DIR', ${quote(join(root, 'wp-content'))});
// Application passwords over plain HTTP need a local environment.
define('WP_ENVIRONMENT_TYPE', 'local');
define('AUTH_KEY', 'test'); define('SECURE_AUTH_KEY', 'test'); define('LOGGED_IN_KEY', 'test'); define('NONCE_KEY', 'test');
define('AUTH_SALT', 'test'); define('SECURE_AUTH_SALT', 'test'); define('LOGGED_IN_SALT', 'test'); define('NONCE_SALT', 'test');
define('DISABLE_WP_CRON', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
$table_prefix = ${quote(db.prefix)};
if (!defined('ABSPATH')) define('ABSPATH', __DIR__ . '/');
require_once ABSPATH . 'wp-settings.php';
`)
  // php -S has no .htaccess: send every path that is no file to WordPress.
  writeFileSync(join(root, 'router.php'), `<?php
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path !== '/' && is_file(__DIR__ . $path)) return false;
$_SERVER['SCRIPT_NAME'] = '/index.php';
require __DIR__ . '/index.php';
`)
  // A must-use plugin that lets a test make WordPress slow or failing.
  const flag = join(dir, 'misbehave')
  mkdirSync(join(root, 'wp-content', 'mu-plugins'), { recursive: true })
  writeFileSync(join(root, 'wp-content', 'mu-plugins', 'test-misbehave.php'), `<?php
$how = @file_get_contents(${quote(flag)});
if ($how === 'slow') sleep(5);
if ($how === 'fail') { http_response_code(500); echo 'Internal Server Error'; exit; }
`)

  const installed = JSON.parse(php(`<?php
define('WP_INSTALLING', true);
require ${quote(join(root, 'wp-load.php'))};
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
wp_install('Booking test site', 'admin', 'admin@example.com', true, '', 'admin-login-password');
update_option('timezone_string', 'Europe/Berlin');
update_option('permalink_structure', '/%postname%/');
flush_rewrite_rules();
$subscriber = wp_insert_user(['user_login' => 'subscriber', 'user_pass' => 'subscriber-login-password', 'user_email' => 'sub@example.com', 'role' => 'subscriber']);
[$admin_password] = WP_Application_Passwords::create_new_application_password(1, ['name' => 'reporting']);
[$subscriber_password] = WP_Application_Passwords::create_new_application_password($subscriber, ['name' => 'reporting']);
$services = [];
foreach ([['Haircut', 'haircut', 'publish'], ['Стрижка', 'стрижка', 'publish'], ['Massage', 'massage', 'publish'], ['Colouring', 'colouring', 'draft']] as [$title, $slug, $status]) {
  $services[$title] = wp_insert_post(['post_type' => 'bc_service', 'post_title' => $title, 'post_name' => $slug, 'post_status' => $status], true);
}
wp_trash_post($services['Massage']);
echo json_encode(['admin' => $admin_password, 'subscriber' => $subscriber_password, 'services' => $services]);
`, dir)) as { admin: string; subscriber: string; services: Record<string, number> }

  let child: ChildProcess | undefined
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return
    // Its own process group: with PHP_CLI_SERVER_WORKERS the workers hold the socket too.
    child = spawn('php', ['-S', `127.0.0.1:${port}`, '-t', root, join(root, 'router.php')], {
      stdio: 'ignore', cwd: root, env: { ...process.env, PHP_CLI_SERVER_WORKERS: '2' }, detached: true,
    })
    // A detached group outlives its parent: end it with the test process, however that ends.
    const group = child.pid!
    process.once('exit', () => { try { process.kill(-group, 'SIGKILL') } catch { /* already gone */ } })
    const deadline = Date.now() + 15_000
    for (;;) {
      try {
        const res = await fetch(`${url}/wp-json/`)
        if (res.ok) return
      } catch { /* not yet */ }
      if (Date.now() > deadline) throw new Error('php -S did not serve WordPress within 15 s')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const stop = async () => {
    if (!child || child.exitCode !== null) return
    const exited = new Promise((resolve) => child!.once('exit', resolve))
    process.kill(-child.pid!, 'SIGKILL')
    await exited
    // The workers are gone once nothing answers on the port.
    const deadline = Date.now() + 5_000
    while (Date.now() < deadline && await fetch(`${url}/wp-json/`).then(() => true, () => false)) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  await start()
  return {
    url,
    admin: `admin:${installed.admin}`,
    subscriber: `subscriber:${installed.subscriber}`,
    services: installed.services,
    misbehave: (how) => writeFileSync(flag, how === 'well' ? '' : how),
    start,
    stop,
    close: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
