// Preloaded with `--import` by load-cpu.ts (ALLOC=1): V8's sampling heap
// profiler, counting every allocation, the ones collected since included.
// The first SIGUSR2 starts it, the second writes the profile to ALLOC_OUT
// (a `.heapprofile`, which alloc-by-function.mjs sums and Chrome DevTools opens).
import inspector from 'node:inspector'
import { writeFileSync } from 'node:fs'

const session = new inspector.Session()
session.connect()
session.post('HeapProfiler.enable')
let sampling = false
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true,
    })
    return
  }
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (error) console.error(error)
    else writeFileSync(process.env.ALLOC_OUT, JSON.stringify(result.profile))
  })
})
