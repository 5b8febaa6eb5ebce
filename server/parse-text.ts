// Whole numbers and yes/no words read from text. The environment (config.ts)
// and query parameters (http/params.ts) both read them; they differ only in
// the words they take and the sentences they write, so each keeps its own.

/** `text` as a whole number in plain digits from `min` to `max`; undefined for anything else. */
export function parseWholeNumber(text: string, min: number, max: number): number | undefined {
  if (!/^\d+$/.test(text)) return undefined
  const n = Number(text)
  return n >= min && n <= max ? n : undefined
}

/** true or false for one of `words` in any letter case; undefined for any other text. */
export function parseBooleanWord(text: string, words: { true: readonly string[]; false: readonly string[] }): boolean | undefined {
  const word = text.toLowerCase()
  if (words.true.includes(word)) return true
  if (words.false.includes(word)) return false
  return undefined
}
