// AUTH_MODE=wordpress under WORKERS > 1 (API.md, "Under load"): the primary
// holds the one verdict cache and asks WordPress (server/wordpress-check.ts);
// each worker asks the primary over node:cluster's IPC channel and keeps a
// verdict for what is left of its AUTH_CACHE_SECONDS. So a credential checked
// through one worker is known to all, also while WordPress is down, and
// WordPress is asked once per credential, not once per worker.
import type { Worker } from 'node:cluster'
import { parentLink, sendToPrimary, sendToWorker } from './ipc.ts'
import { credentialKey, WordPressUnavailableError, type CheckCredentials, type Verdict, type VerdictAnswer } from './wordpress-check.ts'

const ASKED = 'booking-calendar-api:verdict-asked'
const ANSWERED = 'booking-calendar-api:verdict-answered'

interface AskedMessage { type: typeof ASKED; id: number; authorization: string }
type AnsweredMessage =
  | { type: typeof ANSWERED; id: number; answer: VerdictAnswer }
  | { type: typeof ANSWERED; id: number; unavailable: true }

/** In the primary: answer each attached worker's questions with `check`. */
export function serveVerdicts(check: CheckCredentials): { attach(worker: Worker): void } {
  return {
    attach(worker) {
      worker.on('message', (message: AskedMessage) => {
        if (message?.type !== ASKED) return
        const tell = (answer: AnsweredMessage) => sendToWorker(worker, answer)
        check(message.authorization).then(
          (answer) => tell({ type: ANSWERED, id: message.id, answer }),
          () => tell({ type: ANSWERED, id: message.id, unavailable: true }),
        )
      })
    },
  }
}

/**
 * In a worker: verdicts from the primary, each kept here for as long as the
 * primary still keeps it. The primary bounds its own call to WordPress; this
 * bounds the wait for the primary.
 */
export function askPrimaryForVerdicts(options: { timeoutMs: number; now?: () => number }): CheckCredentials {
  const now = options.now ?? Date.now
  const known = new Map<string, { verdict: Verdict; expires: number }>()
  const waiting = new Map<number, (message: AnsweredMessage | undefined) => void>()
  let lastId = 0
  process.on('message', (message: AnsweredMessage) => {
    if (message?.type !== ANSWERED) return
    waiting.get(message.id)?.(message)
  })
  return async (authorization) => {
    const key = credentialKey(authorization)
    const kept = known.get(key)
    if (kept && kept.expires > now()) return { verdict: kept.verdict, ttlMs: kept.expires - now(), source: 'cache' }
    known.delete(key)
    const id = ++lastId
    const message = await new Promise<AnsweredMessage | undefined>((resolve) => {
      const timer = setTimeout(() => settle(undefined), options.timeoutMs)
      const settle = (answer: AnsweredMessage | undefined) => {
        clearTimeout(timer)
        waiting.delete(id)
        resolve(answer)
      }
      waiting.set(id, settle)
      const asked: AskedMessage = { type: ASKED, id, authorization }
      sendToPrimary(parentLink, asked, () => settle(undefined))
    })
    if (!message || 'unavailable' in message) throw new WordPressUnavailableError('the primary could not check the credentials')
    const { answer } = message
    if (answer.ttlMs > 0) {
      if (known.size >= 10_000) known.delete(known.keys().next().value!)
      known.set(key, { verdict: answer.verdict, expires: now() + answer.ttlMs })
    }
    return answer
  }
}
