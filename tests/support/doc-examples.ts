// The requests README.md and docs/ show, read out of the pages, and the answers
// shown beside them, compared with what the service answers
// (tests/integration/doc-examples.test.ts runs them against the demo's data).
//
// A request is a `curl` command: a line of a code block that starts with `curl`
// (or `$ curl`, whose output then follows in the same block), or an inline code
// span that starts with `curl `. Its answer is the code block right after its
// block (nothing but blank lines between), or the lines after `$ curl` in its
// own block. In an answer, `…` stands for what varies from run to run (a tag,
// today's date) or what the page leaves out:
// - in a text, CSV or header line, `…` is any text; a line of `…` alone is any
//   number of lines;
// - in JSON, a string holding `…` is any string of that shape; `…` as an array's
//   item is any number of items; `…` as an object's member is any other members.
// A block preceded by `<!-- not run: why -->` is listed as not run, with why.

export interface ShownAnswer {
  line: number
  text: string
}

export interface DocExample {
  file: string
  /** The line of the request's first line. */
  line: number
  /** The shell text to run: the code block, or the `$ curl` command, or the inline span. */
  script: string
  answer?: ShownAnswer
  /** Why this request is not run, from `<!-- not run: why -->` before its block. */
  notRun?: string
}

export interface CodeBlock {
  /** The line of the opening fence. */
  line: number
  /** The line of the closing fence. */
  endLine: number
  info: string
  text: string
}

/** The fenced code blocks of a Markdown page, each with its indentation removed (blocks inside list items too). */
export function codeBlocksOf(page: string): CodeBlock[] {
  const lines = page.split('\n')
  const blocks: CodeBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const indent = open[1]!.length
    const fence = open[2]!
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[j]!)
      if (close && close[1]!.startsWith(fence[0]!) && close[1]!.length >= fence.length) break
      body.push(lines[j]!.slice(Math.min(indent, /^\s*/.exec(lines[j]!)![0].length)))
    }
    blocks.push({ line: i + 1, endLine: j + 1, info: open[3]!, text: body.join('\n') })
    i = j
  }
  return blocks
}

const CURL_LINE = /^(\$\s+)?curl\s/

/** The `curl` requests of a page, each with the answer the page shows for it, if any. */
export function examplesOf(file: string, page: string): DocExample[] {
  const lines = page.split('\n')
  const blocks = codeBlocksOf(page)
  const examples: DocExample[] = []
  const inBlock = new Set<number>()
  for (const block of blocks) for (let n = block.line; n <= block.endLine; n++) inBlock.add(n)
  blocks.forEach((block, index) => {
    const blockLines = block.text.split('\n')
    const first = blockLines.findIndex((line) => CURL_LINE.test(line.trim()))
    if (first < 0) return
    const before = lines.slice(0, block.line - 1).reverse().find((line) => line.trim() !== '')
    const notRun = /^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$/.exec(before ?? '')?.[1]
    const example: DocExample = { file, line: block.line + 1 + first, script: block.text, ...(notRun === undefined ? {} : { notRun }) }
    if (blockLines[first]!.trim().startsWith('$')) {
      // `$ curl …` then its output, in one block: the command runs to its last line ending in a backslash.
      let last = first
      while (blockLines[last]!.trimEnd().endsWith('\\') && last + 1 < blockLines.length) last++
      example.script = blockLines.slice(first, last + 1).join('\n').replace(/^\s*\$\s+/, '')
      const output = blockLines.slice(last + 1)
      if (output.some((line) => line.trim() !== '')) example.answer = { line: block.line + 2 + last, text: output.join('\n') }
    } else {
      const next = blocks[index + 1]
      if (next && lines.slice(block.endLine, next.line - 1).every((line) => line.trim() === '') && !next.text.split('\n').some((line) => CURL_LINE.test(line.trim()))) {
        example.answer = { line: next.line + 1, text: next.text }
      }
    }
    examples.push(example)
  })
  lines.forEach((text, index) => {
    if (inBlock.has(index + 1)) return
    for (const match of text.matchAll(/`(curl [^`]+)`/g)) examples.push({ file, line: index + 1, script: match[1]! })
  })
  return examples.sort((a, b) => a.line - b.line)
}

// --- Answers -------------------------------------------------------------------

/** `…` as an item of an array or a member of an object: any number of others. */
export const MORE: unique symbol = Symbol('…')
type Shown = string | number | boolean | null | typeof MORE | Shown[] | { [key: string]: Shown; [MORE]?: true }

/** JSON, with `…` allowed as an array item and as an object member. */
export function parseShownJson(text: string): Shown {
  let at = 0
  const fail = (what: string): never => { throw new Error(`${what} at character ${at}: "${text.slice(at, at + 30)}"`) }
  const skip = () => { while (/\s/.test(text[at] ?? '')) at++ }
  const value = (): Shown => {
    skip()
    const char = text[at]
    if (char === '…') { at++; return MORE }
    if (char === '{') {
      at++
      const object: { [key: string]: Shown; [MORE]?: true } = {}
      skip()
      if (text[at] === '}') { at++; return object }
      for (;;) {
        skip()
        if (text[at] === '…') { at++; object[MORE] = true } else {
          const key = value()
          if (typeof key !== 'string') fail('an object key was expected')
          skip()
          if (text[at] !== ':') fail('":" was expected')
          at++
          object[key as string] = value()
        }
        skip()
        if (text[at] === ',') { at++; continue }
        if (text[at] === '}') { at++; return object }
        fail('"," or "}" was expected')
      }
    }
    if (char === '[') {
      at++
      const array: Shown[] = []
      skip()
      if (text[at] === ']') { at++; return array }
      for (;;) {
        array.push(value())
        skip()
        if (text[at] === ',') { at++; continue }
        if (text[at] === ']') { at++; return array }
        fail('"," or "]" was expected')
      }
    }
    const token = /^(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at))?.[0]
    if (token === undefined) fail('a JSON value was expected')
    at += token!.length
    return JSON.parse(token!) as Shown
  }
  const result = value()
  skip()
  if (at < text.length) fail('nothing more was expected')
  return result
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** A shown text with `…` as any text. */
const glob = (shown: string) => new RegExp(`^${shown.split('…').map(escapeRegExp).join('.*')}$`, 's')
const show = (value: unknown) => JSON.stringify(value)?.slice(0, 200)

function matchJson(shown: Shown, actual: unknown, path: string, out: string[]): void {
  if (typeof shown === 'string') {
    if (typeof actual !== 'string' || !(shown.includes('…') ? glob(shown).test(actual) : shown === actual)) out.push(`${path}: the page shows ${show(shown)}, the answer has ${show(actual)}`)
    return
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) { out.push(`${path}: the page shows an array, the answer has ${show(actual)}`); return }
    const more = shown.indexOf(MORE)
    if (more >= 0 && shown.indexOf(MORE, more + 1) >= 0) { out.push(`${path}: the page may show … once in an array`); return }
    const head = more < 0 ? shown : shown.slice(0, more)
    const tail = more < 0 ? [] : shown.slice(more + 1)
    if (more < 0 ? actual.length !== shown.length : actual.length < head.length + tail.length) {
      out.push(`${path}: the page shows ${head.length + tail.length}${more < 0 ? '' : ' or more'} items, the answer has ${actual.length}`)
      return
    }
    head.forEach((item, i) => matchJson(item, actual[i], `${path}[${i}]`, out))
    tail.forEach((item, i) => matchJson(item, actual[actual.length - tail.length + i], `${path}[${actual.length - tail.length + i}]`, out))
    return
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) { out.push(`${path}: the page shows an object, the answer has ${show(actual)}`); return }
    const record = actual as Record<string, unknown>
    for (const key of Object.keys(shown)) {
      if (!(key in record)) out.push(`${path}.${key}: the page shows it, the answer has no such member`)
      else matchJson(shown[key]!, record[key], `${path}.${key}`, out)
    }
    if (shown[MORE] !== true) for (const key of Object.keys(record)) if (!(key in shown)) out.push(`${path}.${key}: the answer has it, the page does not show it (end the object with …)`)
    return
  }
  if (shown === MORE) { out.push(`${path}: … stands only for items of an array or members of an object`); return }
  if (shown !== actual) out.push(`${path}: the page shows ${show(shown)}, the answer has ${show(actual)}`)
}

/** Lines, a line of `…` alone standing for any number of lines and `…` in a line for any text. */
function matchLines(shown: string, actual: string, out: string[]): void {
  const shownLines = shown.replace(/\n+$/, '').split('\n').map((line) => line.trimEnd())
  const actualLines = actual.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n').map((line) => line.trimEnd())
  const pattern = shownLines.map((line) => line.trim() === '…' ? '(?:[^\\n]*\\n)*?' : `${line.split('…').map(escapeRegExp).join('[^\\n]*')}\\n`).join('')
  if (new RegExp(`^${pattern}$`).test(`${actualLines.join('\n')}\n`)) return
  const differs = shownLines.findIndex((line, i) => line.trim() === '…' || !glob(line).test(actualLines[i] ?? ''))
  const at = differs < 0 ? shownLines.length : differs
  out.push(`line ${at + 1} of the answer: the page shows ${show(shownLines[at] ?? '(nothing more)')}, the answer has ${show(actualLines[at] ?? '(nothing more)')}`)
}

function matchBody(shown: string, actual: string, out: string[]): void {
  if (/^\s*[[{]/.test(shown)) {
    let parsed: unknown
    try {
      parsed = JSON.parse(actual)
    } catch {
      out.push(`the page shows JSON, the answer is not: ${show(actual)}`)
      return
    }
    matchJson(parseShownJson(shown), parsed, '$', out)
  } else {
    matchLines(shown, actual, out)
  }
}

/**
 * How the answer a page shows differs from the one received: one sentence per difference, none
 * when they agree. An answer shown from `HTTP/` on is a status line, headers (each shown header
 * must be there, with that value) and a body; one from `{` or `[` is JSON; any other is lines of text.
 */
export function answerDifferences(shown: string, actual: string): string[] {
  const out: string[] = []
  if (/^\s*HTTP\//.test(shown)) {
    const split = (text: string) => {
      const normal = text.replace(/\r\n/g, '\n').replace(/^\s+/, '')
      const end = normal.indexOf('\n\n')
      return { head: (end < 0 ? normal : normal.slice(0, end)).split('\n'), body: end < 0 ? '' : normal.slice(end + 2) }
    }
    const page = split(shown)
    const answer = split(actual)
    if (!glob(page.head[0]!.trim()).test(answer.head[0]!.trim())) out.push(`status line: the page shows ${show(page.head[0])}, the answer has ${show(answer.head[0])}`)
    const headers = new Map<string, string[]>()
    for (const line of answer.head.slice(1)) {
      const colon = line.indexOf(':')
      const name = line.slice(0, colon).trim().toLowerCase()
      headers.set(name, [...headers.get(name) ?? [], line.slice(colon + 1).trim()])
    }
    for (const line of page.head.slice(1)) {
      const colon = line.indexOf(':')
      const name = line.slice(0, colon).trim()
      const value = line.slice(colon + 1).trim()
      const values = headers.get(name.toLowerCase())
      if (!values) out.push(`header ${name}: the page shows it, the answer has none`)
      else if (!values.some((received) => glob(value).test(received))) out.push(`header ${name}: the page shows ${show(value)}, the answer has ${show(values.join(', '))}`)
    }
    if (page.body.trim() !== '') matchBody(page.body, answer.body, out)
    return out
  }
  matchBody(shown, actual, out)
  return out
}
