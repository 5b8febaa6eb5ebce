// The primary never dies of a gone worker: a real cluster (node:cluster) whose
// worker asks for every worker's metrics and exits before the answer comes.
// The primary's answer then goes to a closed channel; unguarded, Node emits
// 'error' on the worker object and the primary, with every worker, ends.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

describe('the cluster\'s primary and a gone worker', function () {
  this.timeout(40_000)

  it('a worker that dies while its metrics are gathered does not end the primary: it restarts the worker and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bc-ipc-'))
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/support/metrics-asker-cluster.ts'], {
      env: { PATH: process.env.PATH, BC_ASKED_MARKER: join(dir, 'asked') }, stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString('utf8') })
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString('utf8') })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    let exitCode: number | null | 'running' = 'running'
    void exited.then((code) => { exitCode = code })
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    try {
      // The first worker asked and exited; the primary started the next one.
      for (const deadline = Date.now() + 20_000; !output.includes('worker waiting') && exitCode === 'running' && Date.now() < deadline;) await sleep(50)
      expect(output).to.contain('worker waiting')
      // prom-client waits at most 5 s for the gone worker's metrics; then the primary answers it.
      await sleep(6_000)
      expect(exitCode, output).to.equal('running')
      child.kill('SIGTERM')
      expect(await exited, output).to.equal(0)
      expect(output).to.contain('primary: all workers stopped')
    } finally {
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
