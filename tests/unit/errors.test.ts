// Error codes are a closed union (STYLE.md, "Errors"): a misspelt code fails to
// compile. `npm test` typechecks first, so the @ts-expect-error below fails the
// run if the union ever takes any string again.
import { expect } from 'chai'
import { RestError, WORDPRESS_AUTH_CODES } from '../../server/errors.ts'

describe('RestError codes', () => {
  it('takes the codes WordPress spells, and a misspelt one does not compile', () => {
    expect(new RestError(400, 'rest_invalid_param', 'x').code).to.equal('rest_invalid_param')
    // @ts-expect-error: rest_invalid_parm is no code of ours.
    expect(new RestError(400, 'rest_invalid_parm', 'x').code).to.equal('rest_invalid_parm')
    expect(WORDPRESS_AUTH_CODES).to.include('incorrect_password')
  })
})
