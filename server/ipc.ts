// Messages between the cluster's primary and its workers (node:cluster's IPC
// channel). A worker may die at any moment (kill -9, the OOM killer), and a
// send to it then fails: without a callback, Node emits 'error' on the worker,
// and an 'error' no one listens for ends the primary, and every worker with it.
// So every send goes through here: nothing is sent over a closed channel, and
// a send that fails all the same is dropped (the worker's 'exit' gives back
// what it held).

/** The primary's side of one worker's channel: what node:cluster's Worker offers, and what a test fakes. */
export interface WorkerLink {
  isConnected(): boolean
  send(message: unknown, callback: (error: Error | null) => void): boolean
}

/** A worker's side of its channel to the primary: `process`, or a test's fake (see parentLink). */
export interface PrimaryLink {
  readonly connected: boolean
  send(message: unknown, callback: (error: Error | null) => void): void
  on(event: 'message', listener: (message: unknown) => void): void
}

/** Sends to a worker that may already be gone; true when the message was handed to the channel. */
export function sendToWorker(worker: WorkerLink, message: unknown, onFailed?: (error: Error) => void): boolean {
  if (!worker.isConnected()) return false
  return worker.send(message, (error) => { if (error) onFailed?.(error) })
}

/** Sends to the primary, which may be gone: `onFailed` hears of a closed channel or a failed send. */
export function sendToPrimary(primary: PrimaryLink, message: unknown, onFailed?: (error: Error) => void): void {
  if (!primary.connected) return void onFailed?.(new Error('the channel to the primary is closed'))
  primary.send(message, (error) => { if (error) onFailed?.(error) })
}

/** This process's channel to its primary (a cluster worker's `process`). */
export const parentLink: PrimaryLink = {
  get connected() { return process.connected },
  send(message, callback) { process.send!(message, undefined, {}, callback) },
  on(event, listener) { process.on(event, listener) },
}
