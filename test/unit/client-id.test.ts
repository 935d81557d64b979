import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientRegistry } from '../../src/core/clients/client-registry.js';
import { testEngine } from '../helpers/fakes/test-engine.js';

describe('client ids', () => {
  it('never start with "-", which a command line would read as an option', async () => {
    const engine = await testEngine();
    try {
      const { storage } = engine;
      // One client in 64 would start with "-" if ids were drawn once; 640 draws miss that with
      // probability (63/64)^640 < 0.00005, so a regression fails here.
      for (let i = 0; i < 640; i += 1) {
        const { client } = await new ClientRegistry(storage, engine.clock).create({ name: `c${i}` });
        assert.match(client.id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      }
    } finally {
      await engine.close();
    }
  });
});
