import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalRedirectUri, isRegisteredRedirectUri } from '../../src/core/clients/redirect-uri.js';

describe('canonicalRedirectUri', () => {
  it('answers the WHATWG serialisation: what a browser navigates to', () => {
    assert.equal(canonicalRedirectUri('HTTPS://Good.Example:443/cb?x=1').uri, 'https://good.example/cb?x=1');
    assert.equal(canonicalRedirectUri('https://good.example').uri, 'https://good.example/');
    assert.equal(canonicalRedirectUri('http://127.0.0.1:8080/cb').uri, 'http://127.0.0.1:8080/cb');
    assert.equal(canonicalRedirectUri('http://[::1]/cb').uri, 'http://[::1]/cb');
    assert.equal(canonicalRedirectUri('com.example.app:/oauth').uri, 'com.example.app:/oauth');
  });

  for (const [uri, problem] of [
    ['https://evil.example\\@good.example/cb', /backslash/],
    ['https://good.example\\cb', /backslash/],
    ['https:evil.example/cb', /https:\/\//],
    ['https:/evil.example/cb', /https:\/\//],
    ['http:///localhost/cb', /https?:\/\/|no host/],
    ['https://user@good.example/cb', /user information/],
    ['https://user:pw@good.example/cb', /user information/],
    ['https://@good.example/cb', /user information/],
    ['com.example.app://user@host/cb', /user information/],
    ['https://good.example/cb#frag', /fragment/],
    ['https://good.example/c\tb', /control/],
    ['http://good.example/cb', /https/],
    ['javascript:alert(1)', /forbidden/],
    ['myapp:/cb', /unsupported/],
    ['/relative/cb', /absolute/],
  ] as const) {
    it(`refuses ${JSON.stringify(uri)}`, () => {
      const result = canonicalRedirectUri(uri);
      assert.equal(result.uri, undefined);
      assert.match(result.problem ?? '', problem);
    });
  }
});

describe('isRegisteredRedirectUri', () => {
  it('matches canonical strings exactly', () => {
    assert.equal(isRegisteredRedirectUri(['https://good.example/cb'], 'https://good.example/cb'), true);
    assert.equal(isRegisteredRedirectUri(['https://good.example/cb'], 'https://good.example/cb/'), false);
    assert.equal(isRegisteredRedirectUri(['https://good.example/cb'], 'https://good.example/cb?x'), false);
  });

  it('refuses a request that is not itself canonical, even if the registration is spelled that way', () => {
    assert.equal(isRegisteredRedirectUri(['https://good.example/cb'], 'https://GOOD.example/cb'), false);
    // A registration stored before canonicalisation: the browser would go to evil.example.
    const legacy = 'https://evil.example\\@good.example/cb';
    assert.equal(isRegisteredRedirectUri([legacy], legacy), false);
    // A legacy spelling matches through its canonical form.
    assert.equal(isRegisteredRedirectUri(['https://Good.Example/cb'], 'https://good.example/cb'), true);
  });
});
