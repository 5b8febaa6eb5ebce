// `npm run demo` stopped the way a terminal stops it: Ctrl-C sends SIGINT to the
// whole process group (npm, tsx, node and mariadbd at once). It must remove its
// MariaDB data directory and leave no mariadbd running, every time.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { findFreePort } from '../../scripts/mariadb.ts'
import { describeOwnServer } from '../support/database.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The data directory and PID of the mariadbd listening on this port, from /proc. */
function findMariaDb(port: number): { pid: number; dataDir: string } | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let args: string[]
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
    } catch {
      continue
    }
    if (!args.includes(`--port=${port}`)) continue
    const dataArg = args.find((arg) => arg.startsWith('--datadir='))
    if (dataArg) return { pid: Number(entry), dataDir: dataArg.slice('--datadir='.length).replace(/\/data$/, '') }
  }
  return undefined
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describeOwnServer('npm run demo', 'npm run demo starts and stops a MariaDB of its own', function () {
  this.timeout(240_000)

  for (const presses of [1, 2]) {
    it(`removes its data directory and stops mariadbd on SIGINT to the process group (Ctrl-C pressed ${presses === 1 ? 'once' : 'twice'})`, async () => {
      const port = await findFreePort()
      const demo = spawn('npm', ['run', 'demo'], {
        detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn' },
      })
      let output = ''
      demo.stdout.on('data', (chunk) => { output += String(chunk) })
      demo.stderr.on('data', (chunk) => { output += String(chunk) })
      const exited = new Promise<number | null>((resolve) => demo.on('exit', (code) => resolve(code)))
      let mariadb: { pid: number; dataDir: string } | undefined
      try {
        const deadline = Date.now() + 180_000
        while (!output.includes('[demo] booking-calendar-api on')) {
          if (Date.now() > deadline || demo.exitCode !== null) throw new Error(`the demo did not start:\n${output.slice(-2000)}`)
          await sleep(200)
        }
        const mariadbPort = Number(/MariaDB on 127\.0\.0\.1:(\d+)/.exec(output)?.[1])
        mariadb = findMariaDb(mariadbPort)
        expect(mariadb, 'the demo\'s mariadbd').to.not.equal(undefined)
        expect(existsSync(mariadb!.dataDir)).to.equal(true)
        const answer = await fetch(`http://127.0.0.1:${port}/wp-json/booking-calendar/v1/slots?per_page=1`)
        expect(answer.status).to.equal(200)

        process.kill(-demo.pid!, 'SIGINT')
        for (let press = 1; press < presses; press++) {
          await sleep(50)
          // The group may be gone already: a quick stop is no failure.
          try {
            process.kill(-demo.pid!, 'SIGINT')
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
          }
        }
        const code = await Promise.race([exited, sleep(60_000).then(() => 'still running')])
        expect(code, output.slice(-2000)).to.not.equal('still running')
        // The demo's node process may outlive npm by a moment: give it a bounded while.
        for (let wait = 0; wait < 100 && (existsSync(mariadb!.dataDir) || alive(mariadb!.pid)); wait++) await sleep(100)
        expect(existsSync(mariadb!.dataDir), `${mariadb!.dataDir} is left behind`).to.equal(false)
        expect(alive(mariadb!.pid), 'mariadbd still runs').to.equal(false)
      } finally {
        if (demo.exitCode === null && demo.signalCode === null) process.kill(-demo.pid!, 'SIGKILL')
        if (mariadb && alive(mariadb.pid)) process.kill(mariadb.pid, 'SIGKILL')
        if (mariadb) rmSync(mariadb.dataDir, { recursive: true, force: true })
      }
    })
  }
})
