// nginx from Debian's packages (installed when missing), run on loopback with
// the compose stack's own template (docker/nginx/templates), for the routing
// tests. Its files live in a temporary directory; stop() removes them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findFreePort } from '../../scripts/mariadb.ts'
import { aptInstall } from '../../scripts/apt.ts'

export const NGINX_TEMPLATE = new URL('../../docker/nginx/templates/default.conf.template', import.meta.url)

const findNginx = () => ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path))

export function ensureNginxInstalled(): string {
  if (!findNginx()) aptInstall(['nginx'], 'nginx')
  const binary = findNginx()
  if (!binary) throw new Error('nginx was installed but its binary is still missing')
  return binary
}

/**
 * What the official nginx image's entrypoint does to a template: replaces
 * `${NAME}` for each variable it is given, and leaves nginx's own `$name` alone.
 */
export function renderTemplate(template: string, variables: Record<string, string>): string {
  return template.replace(/\$\{(\w+)\}/g, (whole, name: string) => variables[name] ?? whole)
}

/** The image's nginx.conf in short: the rendered server inside `http {}`, files kept in `dir`. */
function mainConfig(dir: string, serverConf: string): string {
  return `daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  include ${serverConf};
}
`
}

function writeConfig(variables: Record<string, string>): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bc-nginx-'))
  const serverConf = join(dir, 'default.conf')
  writeFileSync(serverConf, renderTemplate(readFileSync(NGINX_TEMPLATE, 'utf8'), variables))
  const config = join(dir, 'nginx.conf')
  writeFileSync(config, mainConfig(dir, serverConf))
  return { dir, config }
}

/** `nginx -t` on the template rendered with these variables: its exit code and what it printed. */
export function checkNginxConfig(variables: Record<string, string>): { status: number | null; output: string } {
  const nginx = ensureNginxInstalled()
  const { dir, config } = writeConfig(variables)
  try {
    const result = spawnSync(nginx, ['-t', '-e', 'stderr', '-p', dir, '-c', config], { encoding: 'utf8' })
    return { status: result.status, output: `${result.stdout}${result.stderr}` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface NginxProxy {
  url: string
  /** The master process; its workers are its children. */
  pid: number
  stop(): Promise<void>
}

export async function startNginx(upstreams: { api: string; wordpress: string }): Promise<NginxProxy> {
  const nginx = ensureNginxInstalled()
  const port = await findFreePort()
  const { dir, config } = writeConfig({ API_UPSTREAM: upstreams.api, WORDPRESS_UPSTREAM: upstreams.wordpress, NGINX_PORT: `127.0.0.1:${port}` })
  const child: ChildProcess = spawn(nginx, ['-e', 'stderr', '-p', dir, '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] })
  let errors = ''
  child.stderr!.on('data', (chunk: Buffer) => { errors += chunk.toString() })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  process.once('exit', () => child.kill('SIGKILL'))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  while (!(await fetch(`${url}/nginx-started`).then(() => true, () => false))) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${errors}`)
    if (Date.now() > deadline) throw new Error(`nginx did not answer within 10 s: ${errors}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGQUIT')
      await exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The nginx worker processes of a master: the processes whose parent it is, from /proc. */
export function nginxWorkerPids(masterPid: number): number[] {
  const workers: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (new RegExp(`^PPid:\\s+${masterPid}$`, 'm').test(readFileSync(`/proc/${entry}/status`, 'utf8'))) workers.push(Number(entry))
    } catch { /* the process ended while the list was read */ }
  }
  return workers
}

/** A process's resident memory now (VmRSS), in KiB. */
export function residentKib(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN)
}
