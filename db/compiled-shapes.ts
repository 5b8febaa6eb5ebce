// The SQL of a query depends on its shape (which conditions it has, how many
// statuses it lists), not on the values it compares with. Kysely builds every
// query as a tree of frozen nodes, runs the table-prefix plugin over it and
// prints it: about a fifth of the CPU of a small request (docs/performance.md).
// So each shape is compiled once, with placeholders where the values go, and a
// request only puts its values into the placeholders' places.
import { CompiledQuery, createQueryId } from 'kysely'

/** Stands for the value at `index` while a shape is compiled; Kysely passes it through as a parameter. */
class Placeholder {
  constructor(readonly index: number) {}
}

interface Template {
  query: CompiledQuery
  /** Per parameter: the index of the value it takes, or the constant the query itself holds. */
  parameters: Array<{ value: number } | { constant: unknown }>
}

/**
 * npm test sets BC_VERIFY_COMPILED_SHAPES: then every compile builds the query
 * afresh too and fails when its text differs from the one cached for its shape,
 * so a shape that misses an input of the query fails the test that asked for it.
 */
const VERIFY = process.env.BC_VERIFY_COMPILED_SHAPES === '1'

/** A shape's cached text differs from what its build makes now: the shape misses something that changes the query. */
export class ShapeMismatchError extends Error {}

export class CompiledShapes {
  readonly #templates = new Map<string, Template>()
  readonly #verify: boolean
  readonly #cache: boolean

  /** `cache: false` (SQL_SHAPE_CACHE=false): every query is built afresh, as Kysely builds it, its shape unused. */
  constructor(options: { verify?: boolean; cache?: boolean } = {}) {
    this.#verify = options.verify ?? VERIFY
    this.#cache = options.cache ?? true
  }

  /**
   * The query `build` makes from `values`, compiled once per `shape`. `build`
   * must put each of `values` into the query as a parameter (never into its
   * text, never branching on it), and `shape` must name everything else that
   * changes the query's text.
   */
  compile<Row>(shape: string, values: readonly unknown[], build: (values: readonly unknown[]) => CompiledQuery<Row>): CompiledQuery<Row> {
    if (!this.#cache) return build(values)
    let template = this.#templates.get(shape)
    if (!template) {
      const query = build(values.map((_, index) => new Placeholder(index)))
      template = {
        query,
        parameters: query.parameters.map((parameter) => (parameter instanceof Placeholder ? { value: parameter.index } : { constant: parameter })),
      }
      // A site has a few dozen shapes at most; the bound only guards against a bug that makes shapes of values.
      if (this.#templates.size >= 1000) this.#templates.clear()
      this.#templates.set(shape, template)
    } else if (this.#verify) {
      const fresh = build(values.map((_, index) => new Placeholder(index)))
      if (fresh.sql !== template.query.sql) {
        throw new ShapeMismatchError(`The compiled shape "${shape}" names too little: the same shape built other SQL.`)
      }
    }
    return {
      query: template.query.query,
      queryId: createQueryId(),
      sql: template.query.sql,
      parameters: template.parameters.map((parameter) => ('value' in parameter ? values[parameter.value] : parameter.constant)),
    }
  }
}

const shapesByOwner = new WeakMap<object, CompiledShapes>()

/** Makes `shapes` the ones compiled for `db` (createDb, for SQL_SHAPE_CACHE=false). */
export function useCompiledShapes(db: object, shapes: CompiledShapes): void {
  shapesByOwner.set(db, shapes)
}

/** The shapes compiled for one database handle (each has its own table prefix). */
export function compiledShapesOf(db: object): CompiledShapes {
  let shapes = shapesByOwner.get(db)
  if (!shapes) shapesByOwner.set(db, shapes = new CompiledShapes())
  return shapes
}
