// The bytes of an answer's connection that the kernel holds and its client has
// not acknowledged yet, read from /proc/net/tcp (tcp6) on Linux: what
// cut-answer.ts asks when the kernel has taken nothing from the service for a
// while. The client's kernel acknowledges bytes only as its receive window
// opens, that is as the client reads, so this queue moves while the client
// reads, however full the buffers are, and stops when it stops. The window
// opens in steps of at least a segment: on loopback (64 KiB segments) about
// 93 KiB at a time, 13 to 27 s apart for a client reading 5 KB/s. Over a
// network, segments of about 1.4 KB make smaller steps (not measured here).
import { readFile } from 'node:fs/promises'
import { isIPv4, isIPv6 } from 'node:net'
import { endianness } from 'node:os'
import type { Socket } from 'node:net'

/** The send queue of one connection, or undefined when the kernel does not tell (not Linux, no /proc, the connection gone). */
export type SendQueueReader = () => Promise<number | undefined>

/**
 * A reader of `socket`'s send queue, or undefined where there is no
 * /proc/net/tcp to read it from (the caller then counts only what the kernel
 * takes). Its addresses are kept now: a destroyed socket forgets them.
 */
export function sendQueueReader(socket: Socket): SendQueueReader | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = socket
  if (process.platform !== 'linux' || !localAddress || !remoteAddress || localPort === undefined || remotePort === undefined) return undefined
  const littleEndian = endianness() === 'LE'
  const local = procNetAddress(localAddress, localPort, littleEndian)
  const remote = procNetAddress(remoteAddress, remotePort, littleEndian)
  if (local === undefined || remote === undefined) return undefined
  // An IPv4-mapped address (a dual-stack listener's IPv4 client) is an IPv6 socket's: tcp6 lists it.
  const table = isIPv4(localAddress) ? '/proc/net/tcp' : '/proc/net/tcp6'
  return async () => {
    const text = await readTable(table)
    return text === undefined ? undefined : sendQueueIn(text, local, remote)
  }
}

/**
 * How long one read of a table serves every answer that asks. The kernel
 * walks every socket of the network namespace for each read (tcp6 walks the
 * IPv4 ones too): 30 to 110 ms with 10,000 to 28,000 sockets here. Stalled
 * answers looking at once share reads, at most four a second whatever their
 * number, and see the queue at most this late.
 */
const TABLE_SHARED_MS = 250

const tableReads = new Map<string, { startedAt: number; text: Promise<string | undefined> }>()

function readTable(path: string): Promise<string | undefined> {
  const now = Date.now()
  const last = tableReads.get(path)
  if (last && now - last.startedAt < TABLE_SHARED_MS) return last.text
  // Unreadable (no /proc, a sandbox that hides it): the caller keeps to what the kernel takes.
  const text = readFile(path, 'latin1').catch(() => undefined)
  tableReads.set(path, { startedAt: now, text })
  return text
}

/**
 * The tx_queue of the line of `local` and `remote` (as procNetAddress writes
 * them) in the text of /proc/net/tcp or tcp6: bytes written to the socket
 * and not yet acknowledged by the peer, sent or not. Undefined when no line
 * has them (the connection is gone). A pair of addresses names one connection at a time.
 */
export function sendQueueIn(table: string, local: string, remote: string): number | undefined {
  // "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when ...": the two addresses
  // one space apart. Found by one scan, not line by line: the table may have thousands.
  const at = table.indexOf(` ${local} ${remote} `)
  if (at === -1) return undefined
  const lineEnd = table.indexOf('\n', at)
  const fields = table.slice(at, lineEnd === -1 ? undefined : lineEnd).trim().split(/\s+/)
  const queues = /^([0-9A-Fa-f]{8}):[0-9A-Fa-f]{8}$/.exec(fields[3] ?? '')
  return queues ? parseInt(queues[1]!, 16) : undefined
}

/**
 * An address and port as /proc/net/tcp writes them: the address's 32-bit
 * words each as the host stores it (on a little-endian host 127.0.0.1 is
 * 0100007F), in upper-case hex, then the port in hex. Undefined for what is
 * not an IP address. An IPv6 zone (fe80::1%eth0) is not part of it.
 */
export function procNetAddress(address: string, port: number, littleEndian: boolean): string | undefined {
  const bytes = ipBytes(address.replace(/%.*$/, ''))
  if (bytes === undefined || !Number.isInteger(port) || port < 0 || port > 0xffff) return undefined
  let text = ''
  for (let word = 0; word < bytes.length; word += 4) {
    const four = bytes.slice(word, word + 4)
    if (littleEndian) four.reverse()
    for (const byte of four) text += byte.toString(16).padStart(2, '0')
  }
  return `${text}:${port.toString(16).padStart(4, '0')}`.toUpperCase()
}

/** An IPv4 address's 4 bytes, or an IPv6 one's 16 (a trailing dotted IPv4 part included), in network order. */
function ipBytes(address: string): number[] | undefined {
  if (isIPv4(address)) return address.split('.').map(Number)
  if (!isIPv6(address)) return undefined
  const groupsOf = (half: string): number[] => half === '' ? [] : half.split(':').flatMap((part) => {
    if (!isIPv4(part)) return [parseInt(part, 16)]
    const [a, b, c, d] = part.split('.').map(Number) as [number, number, number, number]
    return [(a << 8) | b, (c << 8) | d]
  })
  const [head, tail] = address.split('::') as [string, string | undefined]
  const groups = groupsOf(head)
  if (tail !== undefined) {
    const tailGroups = groupsOf(tail)
    groups.push(...new Array<number>(8 - groups.length - tailGroups.length).fill(0), ...tailGroups)
  }
  return groups.flatMap((group) => [group >> 8, group & 0xff])
}
