// npm run openapi: writes openapi.json from the zod schemas (server/openapi.ts).
// A test fails when the committed file and the code disagree.
import { writeFileSync } from 'node:fs'
import { buildOpenApiDocument } from '../server/openapi.ts'

const file = new URL('../openapi.json', import.meta.url)
writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`)
process.stdout.write(`wrote ${file.pathname}\n`)
