// npm run lint (run by npm test): typescript-eslint's recommended type-checked
// rules, and ESLint Stylistic as the formatter (npm run format), set to the
// house style the code already has (docs/decisions, "Lint and format").
// A rule is turned off only here or at its line, with the reason beside it.
import js from '@eslint/js'
import stylistic from '@stylistic/eslint-plugin'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'tools/**', 'reports/**', '.stryker-tmp/**', '.scratch/**', '**/*.mjs', '**/*.cjs',
    // Recipes for readers, typechecked on their own against types generated from openapi.json (tests/integration/typed-client.test.ts).
    'docs/examples/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/indent': ['error', 2, { SwitchCase: 1, flatTernaryExpressions: true, offsetTernaryExpressions: false, ignoredNodes: ['TemplateLiteral *'] }],
      '@stylistic/semi': ['error', 'never'],
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
      '@stylistic/no-trailing-spaces': 'error',
      '@stylistic/eol-last': 'error',
      '@stylistic/no-multiple-empty-lines': ['error', { max: 1, maxEOF: 0 }],
      '@stylistic/space-before-blocks': 'error',
      '@stylistic/keyword-spacing': 'error',
      '@stylistic/space-infix-ops': 'error',
      '@stylistic/comma-spacing': 'error',
      '@stylistic/arrow-spacing': 'error',
      '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
      '@stylistic/max-len': ['error', { code: 220, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreComments: true, ignoreRegExpLiterals: true }],
      // `async` states a function's contract (it returns a promise; a throw becomes a rejection),
      // as the interfaces it implements ask (Kysely's plugin, our query stubs, async generators).
      '@typescript-eslint/require-await': 'off',
      // Unused names: an underscore says "deliberately unused" (Express's (req, res, next) signatures).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests read supertest's and JSON.parse's bodies, which are `any` by design, and assert
    // them whole with chai's deep.equal: the unsafe-any rules would ask a cast on every line.
    files: ['tests/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // mocha's hooks and chai's expect(fn).to.throw pass methods around on purpose.
      '@typescript-eslint/unbound-method': 'off',
      // chai's property assertions (expect(x).to.be.true) are expressions.
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
)
