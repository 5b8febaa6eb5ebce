// The send queue of an answer's connection as /proc/net/tcp and tcp6 give it
// (server/http/send-queue.ts): what SEND_TIMEOUT_MS counts as a client's
// progress when the kernel takes nothing (cut-answer.ts).
import { expect } from 'chai'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { procNetAddress, sendQueueIn, sendQueueReader } from '../../server/http/send-queue.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// Lines as Linux 6.18 wrote them for a connection on loopback, the service's side first (its tx_queue the bytes its client has not read).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 108 1 000000009a91a727 100 0 0 10 0
  33: 0100007F:8FDD 0100007F:9712 01 003EF200:00000000 04:0000001F 00000000     0        0 30792 2 0000000046b4f65b 20 0 0 15 -1
  37: 0100007F:9712 0100007F:8FDD 01 00000000:0001F400 00:00000000 00000000     0        0 30791 2 0000000058d85c0f 20 8 0 10 -1
`
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:8969 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 13994 1 00000000e639f5d9 100 0 0 10 0
   3: 00000000000000000000000001000000:9549 00000000000000000000000001000000:D66C 01 0039DC00:00000000 04:00000024 00000000     0        0 30392 2 0000000059b30130 20 0 0 15 -1
   4: 0000000000000000FFFF00000100007F:9F53 0000000000000000FFFF00000100007F:9C36 01 003EF200:00000000 04:0000001B 00000000     0        0 30399 2 0000000059b30130 20 0 0 15 -1
`

describe('procNetAddress: an address and port as /proc/net/tcp writes them', () => {
  const cases: Array<[string, number, boolean, string | undefined]> = [
    ['127.0.0.1', 0x8fdd, true, '0100007F:8FDD'],
    ['127.0.0.1', 0x8fdd, false, '7F000001:8FDD'],
    ['10.1.2.254', 80, true, 'FE02010A:0050'],
    ['0.0.0.0', 0, true, '00000000:0000'],
    ['::1', 0x9549, true, '00000000000000000000000001000000:9549'],
    ['::1', 0x9549, false, '00000000000000000000000000000001:9549'],
    // A dual-stack listener's IPv4 client, as Node names it.
    ['::ffff:127.0.0.1', 0x9f53, true, '0000000000000000FFFF00000100007F:9F53'],
    ['2001:db8::ff00:42:8329', 443, true, 'B80D01200000000000FF000029834200:01BB'],
    ['2001:0db8:0000:0000:0000:ff00:0042:8329', 443, true, 'B80D01200000000000FF000029834200:01BB'],
    ['fe80::a:b%eth0', 8080, true, '000080FE00000000000000000B000A00:1F90'],
    ['::', 65535, true, '00000000000000000000000000000000:FFFF'],
    ['localhost', 80, true, undefined],
    ['', 80, true, undefined],
    ['127.0.0.1', 65536, true, undefined],
    ['127.0.0.1', -1, true, undefined],
    ['1.2.3.4::', 80, true, undefined],
  ]
  for (const [address, port, littleEndian, expected] of cases) {
    it(`${address} port ${port}, ${littleEndian ? 'little' : 'big'}-endian: ${expected ?? 'none'}`, () => {
      expect(procNetAddress(address, port, littleEndian)).to.equal(expected)
    })
  }
})

describe('sendQueueIn: the tx_queue of a connection\'s line', () => {
  it('IPv4: the line of the local and remote address, not its peer\'s nor the listener\'s', () => {
    expect(sendQueueIn(TCP, '0100007F:8FDD', '0100007F:9712')).to.equal(0x3ef200)
    expect(sendQueueIn(TCP, '0100007F:9712', '0100007F:8FDD')).to.equal(0)
  })

  it('IPv6 and an IPv4-mapped address, in tcp6', () => {
    expect(sendQueueIn(TCP6, '00000000000000000000000001000000:9549', '00000000000000000000000001000000:D66C')).to.equal(0x39dc00)
    expect(sendQueueIn(TCP6, '0000000000000000FFFF00000100007F:9F53', '0000000000000000FFFF00000100007F:9C36')).to.equal(0x3ef200)
  })

  it('no line of those addresses (the connection gone), an empty table, or a malformed queue: undefined', () => {
    expect(sendQueueIn(TCP, '0100007F:8FDD', '0100007F:9713')).to.equal(undefined)
    expect(sendQueueIn(TCP, '00000000:07E8', '0100007F:9712')).to.equal(undefined)
    expect(sendQueueIn('', '0100007F:8FDD', '0100007F:9712')).to.equal(undefined)
    expect(sendQueueIn('   1: 0100007F:8FDD 0100007F:9712 01 zz:00000000\n', '0100007F:8FDD', '0100007F:9712')).to.equal(undefined)
  })
})

/** A connection on loopback whose client reads nothing until told, the server's side writing `bytes` at once. */
async function unreadConnection(listenOn: string, connectTo: string, bytes: number): Promise<{ served: Socket; client: Socket; close(): Promise<void> }> {
  let served: Socket | undefined
  const server: Server = createServer((socket) => {
    served = socket
    socket.on('error', () => { /* the test ends it */ })
    socket.write(Buffer.alloc(bytes))
  })
  await new Promise<void>((resolve) => server.listen(0, listenOn, resolve))
  const client = connect((server.address() as { port: number }).port, connectTo)
  client.on('error', () => { /* the test ends it */ })
  client.pause()
  for (const until = Date.now() + 5_000; served === undefined && Date.now() < until;) await sleep(10)
  return {
    served: served!, client,
    close: async () => {
      client.destroy()
      served!.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** Longer than one read of /proc/net/tcp serves (send-queue.ts): the next read is a new one. */
const NEXT_READ_MS = 300

/** The reader's answer once it stands still (the client's buffers full), or the last one after 5 s. */
async function settledQueue(read: () => Promise<number | undefined>): Promise<number | undefined> {
  let last = await read()
  for (const until = Date.now() + 5_000; Date.now() < until;) {
    await sleep(NEXT_READ_MS)
    const now = await read()
    if (now === last) return now
    last = now
  }
  return last
}

const onLinux = process.platform === 'linux' ? describe : describe.skip

onLinux('sendQueueReader: a real connection\'s send queue, on Linux', () => {
  for (const [listenOn, connectTo, what] of [
    ['127.0.0.1', '127.0.0.1', 'IPv4'],
    ['::1', '::1', 'IPv6'],
    ['::', '127.0.0.1', 'an IPv4 client of a dual-stack listener (IPv4-mapped, in tcp6)'],
  ] as const) {
    it(`${what}: stands still while its client reads nothing, moves when it reads, gone with the connection`, async () => {
      const connection = await unreadConnection(listenOn, connectTo, 16 << 20)
      const read = sendQueueReader(connection.served)!
      try {
        const still = await settledQueue(read)
        expect(still, 'bytes its client has not read').to.be.above(0)
        // Far more than the client's buffer and the window steps of loopback (about 64 KiB).
        connection.client.resume()
        await sleep(100)
        connection.client.pause()
        await sleep(NEXT_READ_MS)
        expect(await read()).to.be.a('number').and.not.equal(still)
      } finally {
        await connection.close()
      }
      await sleep(NEXT_READ_MS)
      expect(await read(), 'no line once the connection is closed').to.equal(undefined)
    })
  }
})
