// The layering check (npm run layers, run by npm test): the floors of the code
// (docs/architecture.md). db/ knows nothing of the service above it; the domain
// knows nothing of HTTP or the routes; the HTTP layer does not reach up into the
// routes; and no module imports itself round a circle.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'An import circle: break it by moving what both need below both.', from: {}, to: { circular: true } },
    { name: 'db-below-server', severity: 'error', comment: 'db/ is the floor: it never imports server/.', from: { path: '^db/' }, to: { path: '^server/' } },
    { name: 'domain-below-http', severity: 'error', comment: 'The domain never imports the HTTP layer or the routes.', from: { path: '^server/domain/' }, to: { path: '^server/(http|routes)/' } },
    { name: 'http-below-routes', severity: 'error', comment: 'The HTTP layer never imports the routes.', from: { path: '^server/http/' }, to: { path: '^server/routes/' } },
    {
      name: 'scripts-through-tools', severity: 'error',
      comment: 'scripts/ reach db/ and server/ through server/tools.ts, or a public entry: config, log, openapi, schema, demo data, seed.',
      from: { path: '^scripts/' },
      to: { path: '^(db|server)/', pathNot: '^(server/(tools|config|log|openapi)|db/(schema|demo-data|seed))[.]ts$' },
    },
    { name: 'service-not-tools', severity: 'error', comment: 'The service never imports scripts/ or tests/.', from: { path: '^(server|db)/' }, to: { path: '^(scripts|tests|tools)/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
}
