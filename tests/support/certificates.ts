// Certificates for a private MariaDB with TLS, made by openssl at test time:
// a CA and a server certificate it signed for localhost and 127.0.0.1, a client
// certificate of the same CA, and a second CA that signed none of them.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { aptInstall } from '../../scripts/apt.ts'

export interface TestCertificates {
  dir: string
  /** The CA that signed the server's certificate. */
  ca: string
  serverCert: string
  serverKey: string
  /** A CA of its own that signed nothing here. */
  wrongCa: string
  remove(): void
}

function openssl(args: string[], cwd: string): void {
  const run = spawnSync('openssl', args, { cwd, encoding: 'utf8' })
  if (run.error && (run.error as NodeJS.ErrnoException).code === 'ENOENT') {
    aptInstall(['openssl'], 'openssl')
    return openssl(args, cwd)
  }
  if (run.status !== 0) throw new Error(`openssl ${args[0]} failed: ${run.stderr}`)
}

/** `names`: the server certificate's subjectAltName, as openssl writes it. */
export function makeCertificates(names = 'DNS:localhost,IP:127.0.0.1'): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'bc-certs-'))
  const ca = (name: string) => openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`], dir)
  ca('test-ca')
  ca('wrong-ca')
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=booking test database'], dir)
  writeFileSync(join(dir, 'server.ext'), `subjectAltName=${names}\n`)
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'test-ca.pem', '-CAkey', 'test-ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'server.ext'], dir)
  return {
    dir, ca: join(dir, 'test-ca.pem'), serverCert: join(dir, 'server.pem'), serverKey: join(dir, 'server.key'), wrongCa: join(dir, 'wrong-ca.pem'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
