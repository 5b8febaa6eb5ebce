import { writeFileSync } from 'node:fs'
import { startMariaDb, stopOnExit } from './scripts/mariadb.ts'
import { addRecommendedIndexes, createBenchDatabase, READER, BENCH_DATABASE } from './scripts/bench/dataset.ts'
const server = await startMariaDb({ bufferPoolMb: 1024 })
stopOnExit(server)
console.log('made', await createBenchDatabase(server), 'ms')
console.log('indexes', await addRecommendedIndexes(server), 'ms')
const info = { host: '127.0.0.1', port: server.port, user: READER.user, password: READER.password, database: BENCH_DATABASE }
writeFileSync(`/work/scratch/db-${process.env.BENCH_BOOKINGS}.json`, JSON.stringify(info))
console.log(JSON.stringify(info))
setInterval(() => {}, 1e9)
