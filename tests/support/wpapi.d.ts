// The part of node-wpapi (1.2, no types of its own) the discovery test uses.
declare module 'wpapi' {
  interface WPRequest extends PromiseLike<unknown> {
    param(name: string, value: unknown): WPRequest
    get(): Promise<unknown>
    headers(): Promise<Record<string, string>>
    setHeaders(name: string, value: string): WPRequest
  }
  class WPAPI {
    constructor(options: { endpoint: string; routes?: unknown })
    static discover(url: string): Promise<WPAPI>
    static site(endpoint: string): WPAPI
    namespace(name: string): Record<string, () => WPRequest>
    setHeaders(name: string, value: string): WPAPI
    root(path?: string): WPRequest
  }
  export default WPAPI
}
