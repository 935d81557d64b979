import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { FormBrowser } from '../helpers/form-browser.js';

// RFC 8707: a request that names a resource asks for a token for that server (an MCP server, an API).
// The consent page says which one, by the name the operator registered it with and its URI.

const MCP = 'http://127.0.0.1:3001/mcp';
const NOTES = 'https://notes.example/api';

/** The consent page's sentence about resources, tags removed; undefined when it has none. */
function resourceLine(page: string): string | undefined {
  const match = /<p class="resources">([\s\S]*?)<\/p>/.exec(page);
  return match?.[1]
    ?.replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

for (const backend of backends()) {
  describe(`the consent page names the resource the token is for (${backend})`, () => {
    let server: TestServer;
    let browser: FormBrowser;
    let clientId: string;
    before(async () => {
      server = await startTestServer(backend);
      const resources = server.gatehouse.engine.resources;
      await resources.create({ uri: MCP, name: 'Example MCP server & tools', scopes: ['mcp:tools'] });
      await resources.create({ uri: NOTES, scopes: ['mcp:tools'] });
      const { client } = await server.client({
        name: 'MCP client',
        redirect_uris: ['https://client.example/cb'],
        scopes: ['mcp:tools'],
      });
      clientId = client.id;
      const { user, password } = await server.user();
      browser = new FormBrowser(server);
      await browser.signIn(user.username, password);
    });
    after(async () => {
      await server.close();
    });

    async function consentFor(resources: string[]): Promise<string> {
      const query = new URLSearchParams({ response_type: 'code', client_id: clientId, scope: 'mcp:tools' });
      for (const resource of resources) query.append('resource', resource);
      const page = await browser.get(`/authorize?${query.toString()}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Allow <span class="client">MCP client<\/span>/);
      return page.text;
    }

    it('a registered name, then the URI; escaped', async () => {
      const page = await consentFor([MCP]);
      assert.equal(resourceLine(page), `This access is for Example MCP server &amp; tools (${MCP}).`);
    });

    it('a resource without a name: its URI', async () => {
      assert.equal(resourceLine(await consentFor([NOTES])), `This access is for ${NOTES}.`);
    });

    it('two resources, in the order asked', async () => {
      assert.equal(
        resourceLine(await consentFor([NOTES, MCP])),
        `This access is for ${NOTES} and Example MCP server &amp; tools (${MCP}).`,
      );
    });

    it('no resource: no such line', async () => {
      assert.equal(resourceLine(await consentFor([])), undefined);
    });
  });
}
