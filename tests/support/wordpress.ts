// The WordPress of the access tests, on scripts/wordpress.ts: a site
// installed by wp_install(), an administrator and a subscriber with application
// passwords, services written by wp_insert_post, and a must-use plugin that
// lets a test make WordPress slow or failing.
import { join } from 'node:path'
import { readFileSync, writeFileSync } from 'node:fs'
import { installSitePhp, prepareWordPress, quotePhp } from '../../scripts/wordpress.ts'
import { testServer, type TestDatabase } from './database.ts'

export interface WordPressSite {
  url: string
  /** Application passwords, as `user:password` for HTTP Basic. */
  admin: string
  subscriber: string
  /** Post IDs of the services WordPress created, by title. */
  services: Record<string, number>
  /** How many requests for users/me (the credentials check) WordPress has had. */
  credentialChecks(): number
  /** Makes WordPress sleep (`slow`) or answer 500 (`fail`) on every request. */
  misbehave(how: 'slow' | 'fail' | 'well'): void
  stop(): Promise<void>
  /** Starts php -S again after stop(), on the same port; a no-op while it runs. */
  start(): Promise<void>
  close(): Promise<void>
}

export async function startWordPress(db: TestDatabase): Promise<WordPressSite> {
  const server = testServer()
  // WordPress writes: it gets an account of its own on the test database.
  const dbUser = `wp_${db.name.slice(-20)}`.slice(0, 32)
  await db.admin.query(`CREATE USER ${quotePhp(dbUser)}@'%' IDENTIFIED BY 'wp-password'; GRANT ALL ON \`${db.name}\`.* TO ${quotePhp(dbUser)}@'%'`)
  const wp = await prepareWordPress({
    database: { name: db.name, host: server.host, port: server.port, user: dbUser, password: 'wp-password' },
    prefix: db.prefix,
  })
  const flag = join(wp.dir, 'misbehave')
  const checks = join(wp.dir, 'credential-checks')
  writeFileSync(checks, '')
  writeFileSync(join(wp.root, 'wp-content', 'mu-plugins', 'test-misbehave.php'), `<?php
if (strpos($_SERVER['REQUEST_URI'] ?? '', '/users/me') !== false) file_put_contents(${quotePhp(checks)}, "x\\n", FILE_APPEND | LOCK_EX);
$how = @file_get_contents(${quotePhp(flag)});
if ($how === 'slow') sleep(5);
if ($how === 'fail') { http_response_code(500); echo 'Internal Server Error'; exit; }
`)
  const installed = JSON.parse(wp.php(`<?php
${installSitePhp(wp.root)}
$subscriber = wp_insert_user(['user_login' => 'subscriber', 'user_pass' => 'subscriber-login-password', 'user_email' => 'sub@example.com', 'role' => 'subscriber']);
[$admin_password] = WP_Application_Passwords::create_new_application_password(1, ['name' => 'reporting']);
[$subscriber_password] = WP_Application_Passwords::create_new_application_password($subscriber, ['name' => 'reporting']);
$services = [];
foreach ([['Haircut', 'haircut', 'publish'], ['Стрижка', 'стрижка', 'publish'], ['Massage', 'massage', 'publish'], ['Colouring', 'colouring', 'draft']] as [$title, $slug, $status]) {
  $services[$title] = wp_insert_post(['post_type' => 'bc_service', 'post_title' => $title, 'post_name' => $slug, 'post_status' => $status], true);
}
wp_trash_post($services['Massage']);
echo json_encode(['admin' => $admin_password, 'subscriber' => $subscriber_password, 'services' => $services]);
`)) as { admin: string; subscriber: string; services: Record<string, number> }
  await wp.start()
  return {
    url: wp.url,
    admin: `admin:${installed.admin}`,
    subscriber: `subscriber:${installed.subscriber}`,
    services: installed.services,
    credentialChecks: () => readFileSync(checks, 'utf8').length / 2,
    misbehave: (how) => writeFileSync(flag, how === 'well' ? '' : how),
    start: wp.start,
    stop: wp.stop,
    close: wp.close,
  }
}
