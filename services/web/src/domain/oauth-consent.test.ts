import { describe, expect, it } from 'vitest';
import { consentFor } from './oauth-consent.js';

const api = 'https://api.example.com';

describe('consent', () => {
  it('read only grants read and refuses write', () => {
    expect(consentFor({ [api]: ['read', 'write'] }, 'read')).toEqual([{ resource: api, granted: ['read'], refused: ['write'] }]);
  });

  it('read write grants both', () => {
    expect(consentFor({ [api]: ['read', 'write'] }, 'read write')).toEqual([{ resource: api, granted: ['read', 'write'], refused: [] }]);
  });

  it('never grants what was not asked for, nor a scope the API does not have', () => {
    expect(consentFor({ [api]: ['read'] }, 'read write')).toEqual([{ resource: api, granted: ['read'], refused: [] }]);
    expect(consentFor({ [api]: ['admin', 'write'] }, 'read write')).toEqual([{ resource: api, granted: ['write'], refused: ['admin'] }]);
    expect(consentFor({}, 'read write')).toEqual([]);
  });
});
