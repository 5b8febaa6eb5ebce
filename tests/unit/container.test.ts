// The image and the compose stack, checked without a Docker engine:
// both files pass their linters, and what they say agrees with the code.
import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { parse } from 'yaml'
import { loadConfig } from '../../server/config.ts'

const bin = (name: string) => new URL(`../../node_modules/.bin/${name}`, import.meta.url).pathname

interface ComposeService {
  image?: string
  build?: { context: string }
  command?: string[]
  environment?: Record<string, string>
  volumes?: string[]
  ports?: string[]
  healthcheck?: { test: string[] }
  depends_on?: Record<string, { condition: string }> | string[]
  cpu_shares?: number
}
const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as { services: Record<string, ComposeService> }

/** Compose's interpolation of `${NAME:-default}` when NAME is not set. */
function withDefaults(environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).map(([name, value]) =>
    [name, String(value).replace(/\$\{\w+:-([^}]*)\}/g, '$1')]))
}

/** The Dockerfile's instructions, stage by stage (continuation lines joined). */
function dockerfileStages(): { from: string; instructions: string[] }[] {
  const lines = readFileSync('Dockerfile', 'utf8').replace(/\\\n\s*/g, ' ').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'))
  const stages: { from: string; instructions: string[] }[] = []
  for (const line of lines) {
    if (line.startsWith('FROM ')) stages.push({ from: line, instructions: [] })
    else stages.at(-1)!.instructions.push(line)
  }
  return stages
}

describe('the container files', () => {
  it('docker-compose.yml passes dclint with no error and no warning', () => {
    const result = spawnSync(bin('dclint'), ['docker-compose.yml', '--max-warnings', '0', '--color', 'false'], { encoding: 'utf8' })
    expect(result.stdout.trim()).to.equal('')
    expect(result.status).to.equal(0)
  })

  it('dclint does fail on a compose file with a problem (so the check above can fail)', () => {
    const result = spawnSync(bin('dclint'), ['tests/fixtures/bad-compose.yml', '--max-warnings', '0', '--color', 'false'], { encoding: 'utf8' })
    expect(result.status).to.not.equal(0)
    expect(result.stdout).to.include('no-unbound-port-interfaces')
  })

  it('the Dockerfile passes dockerfile-utils lint, which does fail on a broken one', () => {
    const good = spawnSync(bin('dockerfile-utils'), ['lint', 'Dockerfile'], { encoding: 'utf8' })
    expect(good.stdout.trim()).to.equal('')
    expect(good.status).to.equal(0)
    const bad = spawnSync(bin('dockerfile-utils'), ['lint', 'tests/fixtures/Dockerfile.bad'], { encoding: 'utf8' })
    expect(bad.status).to.equal(1)
    expect(bad.stdout).to.include('Missing command after HEALTHCHECK CMD')
  })

  it('the image: multi-stage, production dependencies only, non-root, HEALTHCHECK on /healthz, CMD a file the build makes', () => {
    const stages = dockerfileStages()
    expect(stages.length).to.be.at.least(2)
    const final = stages.at(-1)!
    const deps = stages.find((stage) => stage.from.endsWith(' AS deps'))!
    expect(deps.instructions).to.include('RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force')
    expect(final.instructions).to.include('COPY --from=deps /app/node_modules ./node_modules')
    expect(final.instructions.some((line) => /^COPY --from=build /.test(line) && line.includes('node_modules'))).to.equal(false)
    const user = final.instructions.findIndex((line) => line.startsWith('USER '))
    expect(final.instructions[user]).to.equal('USER node')
    expect(user).to.be.below(final.instructions.findIndex((line) => line.startsWith('CMD ')))
    expect(final.instructions.find((line) => line.startsWith('HEALTHCHECK '))).to.include('/healthz')
    expect(final.instructions.at(-1)).to.equal('CMD ["node", "dist/server/main.js"]')
    // Every file the build stage copies exists.
    for (const line of stages[0]!.instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from'))) {
      for (const source of line.split(/\s+/).slice(1, -1)) expect(existsSync(source), source).to.equal(true)
    }
  })

  it('the build makes every file the image runs, and what they import is a production dependency or Node\'s own', function () {
    this.timeout(120_000)
    const outDir = `/tmp/bc-build-${process.pid}`
    const build = spawnSync(bin('tsc'), ['-p', 'tsconfig.build.json', '--outDir', outDir], { encoding: 'utf8' })
    expect(build.stdout).to.equal('')
    expect(build.status).to.equal(0)
    for (const file of ['server/main.js', 'scripts/seed.js', 'db/schema.js']) expect(existsSync(`${outDir}/${file}`), file).to.equal(true)
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; scripts: Record<string, string> }
    expect(pkg.scripts.build).to.include("copyFileSync('db/schema.sql', 'dist/db/schema.sql')")
    const listing = spawnSync('find', [outDir, '-name', '*.js'], { encoding: 'utf8' }).stdout.trim().split('\n')
    const imported = new Set<string>()
    for (const file of listing) {
      for (const match of readFileSync(file, 'utf8').matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm)) imported.add(match[1]!)
    }
    const bare = [...imported].filter((spec) => !spec.startsWith('.')).map((spec) => spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
    const outside = bare.filter((name) => !(name in pkg.dependencies) && !name.startsWith('node:') && !builtinModules.includes(name))
    expect(outside).to.deep.equal([])
    spawnSync('rm', ['-rf', outDir])
  })

  describe('docker-compose.yml', () => {
    const { api, db, wordpress, seed, proxy } = compose.services

    it('has the five services: db, wordpress, api, seed and proxy', () => {
      expect(Object.keys(compose.services).sort()).to.deep.equal(['api', 'db', 'proxy', 'seed', 'wordpress'])
      expect(db!.image).to.match(/^mariadb:/)
      expect(wordpress!.image).to.match(/^wordpress:/)
      expect(proxy!.image).to.match(/^nginx:/)
      expect(api!.build).to.deep.equal({ context: '.' })
      expect(seed!.build).to.deep.equal({ context: '.' })
    })

    it('db: a healthcheck, and the init script mounted where the image runs it, not executable (so it is sourced)', () => {
      expect(db!.healthcheck!.test).to.include('healthcheck.sh')
      expect(db!.volumes).to.include('./docker/db/initdb.d:/docker-entrypoint-initdb.d:ro')
      const mode = statSync('docker/db/initdb.d/10-booking-api-reader.sh').mode
      expect(mode & 0o111).to.equal(0)
    })

    it('api: the service\'s config accepts its variables and reads through the account the init script makes, in WordPress\'s database', () => {
      const env = withDefaults(api!.environment!)
      const dbEnv = withDefaults(db!.environment!)
      const config = loadConfig(env)
      expect(config.database).to.deep.equal({
        host: 'db', port: 3306, user: dbEnv.BOOKING_API_DB_USER, password: dbEnv.BOOKING_API_DB_PASSWORD, database: dbEnv.MARIADB_DATABASE,
        // The stack's MariaDB has no TLS: PREFERRED (the default) reads it in plain text.
        tls: { mode: 'PREFERRED' },
      })
      expect(config.tablePrefix).to.equal(withDefaults(wordpress!.environment!).WORDPRESS_TABLE_PREFIX)
      expect(api!.depends_on).to.deep.include({ seed: { condition: 'service_completed_successfully' } })
    })

    it('api: steps back for the site when the cores are short, a quarter of the CPU weight the others have (decision 0032)', () => {
      expect(api!.cpu_shares).to.equal(256)
      for (const other of [db, wordpress, proxy, seed]) expect(other!.cpu_shares).to.equal(undefined)
    })

    it('wordpress and seed: the official image\'s variables, WordPress\'s own account, and the seed may install WordPress through it', () => {
      const wp = withDefaults(wordpress!.environment!)
      const dbEnv = withDefaults(db!.environment!)
      expect(wp).to.include({ WORDPRESS_DB_HOST: 'db:3306', WORDPRESS_DB_USER: dbEnv.MARIADB_USER, WORDPRESS_DB_PASSWORD: dbEnv.MARIADB_PASSWORD, WORDPRESS_DB_NAME: dbEnv.MARIADB_DATABASE })
      const seedEnv = withDefaults(seed!.environment!)
      const config = loadConfig(seedEnv)
      expect(config.database.user).to.equal(dbEnv.MARIADB_USER)
      expect(seedEnv.WORDPRESS_INSTALL_URL).to.equal('http://wordpress')
      expect(seed!.command).to.deep.equal(['node', 'dist/scripts/seed.js'])
    })

    it('proxy: port 8080 on loopback, the template mounted where the nginx image renders it, upstreams named as services', () => {
      expect(proxy!.ports).to.deep.equal(['127.0.0.1:8080:80'])
      expect(proxy!.volumes).to.include('./docker/nginx/templates:/etc/nginx/templates:ro')
      expect(proxy!.environment).to.include({ API_UPSTREAM: 'api:8080', WORDPRESS_UPSTREAM: 'wordpress:80', NGINX_PORT: '80' })
      expect(existsSync('docker/nginx/templates/default.conf.template')).to.equal(true)
    })
  })
})
