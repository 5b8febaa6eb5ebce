// One small cache style for the whole domain: computed once, kept, bounded.
/**
 * The value under `key`, computed once and kept; a cache that reaches `limit`
 * entries starts over, so a long-running process never grows it without bound.
 */
export function remember<K, V>(cache: Map<K, V>, limit: number, key: K, compute: (key: K) => V): V {
  let value = cache.get(key)
  if (value === undefined) {
    value = compute(key)
    if (cache.size >= limit) cache.clear()
    cache.set(key, value)
  }
  return value
}
