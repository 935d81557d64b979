import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MAIN_HELP } from '../../src/cli/help.js';

// A newcomer reads one line of `gatehouse --help` or of the npm listing: it names the OpenID Provider
// before the OAuth 2.0 authorization server, as the README's first line does.
describe('what Gatehouse says it is', () => {
  it('`gatehouse --help` names the OpenID Provider on its first line', () => {
    assert.equal(MAIN_HELP.split('\n')[0], 'gatehouse: OpenID Provider and OAuth 2.0 authorization server');
  });

  it('the package description does too', () => {
    const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
      description: string;
    };
    assert.match(manifest.description, /^OpenID Provider and OAuth 2\.0 authorization server for Node\.js/);
  });
});
