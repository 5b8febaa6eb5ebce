// What a statement, or a wait in line, listens to for its client hanging up.
/**
 * The part of AbortSignal that we use, so an AbortSignal does too. The
 * service's own is server/http/cut-answer.ts' ClientGoneSignal, one per request.
 */
export interface GoneSignal {
  readonly aborted: boolean
  /** Why: a ClientGoneError for the service's own signal. */
  readonly reason: Error | undefined
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}
