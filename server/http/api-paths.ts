// Where the namespace answers (API.md, "Where it answers"), and the methods it
// allows: below routes/, so that the HTTP layer and the access guard need not
// import the routes.
export const NAMESPACE = 'booking-calendar/v1'

/** Where the namespace answers: WordPress's address form and the short form (rest_route is rewritten to the latter). */
export const PREFIXES = [`/wp-json/${NAMESPACE}`, `/${NAMESPACE}`]

export const ALLOW = 'GET, HEAD, OPTIONS'
