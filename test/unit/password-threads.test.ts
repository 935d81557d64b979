import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PasswordThreads } from '../../src/core/users/password-threads.js';
import { hashPassword, PASSWORD_THREAD_NICE, verifyPassword } from '../../src/core/users/passwords.js';
import { threadNiceValues } from '../helpers/threads.js';

describe('password threads', () => {
  it('hash and verify off the event loop, refusing wrong passwords and malformed hashes', async () => {
    const stored = await hashPassword('correct horse battery');
    assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const results = await Promise.all([
      verifyPassword(stored, 'correct horse battery'),
      verifyPassword(stored, 'correct horse batterY'),
      verifyPassword('not a PHC string', 'correct horse battery'),
      verifyPassword(undefined, 'correct horse battery'),
    ]);
    assert.deepEqual(results, [true, false, false, false]);
  });

  it('run below the event loop priority, so requests are served first on a shared core', async (t) => {
    if (!existsSync('/proc/self/task')) {
      t.skip('needs Linux /proc');
      return;
    }
    await hashPassword('warm the threads up');
    const nices = threadNiceValues();
    assert.equal(nices[0], 0, 'the main thread keeps its priority');
    assert.ok(nices.includes(PASSWORD_THREAD_NICE), `thread nice values: ${nices.join(',')}`);
  });

  it('queue work beyond their number and report a failure without losing the queue', async () => {
    const threads = new PasswordThreads(1, 0);
    const stored = (await threads.run('hash', [
      'pw',
      { memoryCost: 1024, timeCost: 1, parallelism: 1 },
    ])) as string;
    const outcomes = await Promise.allSettled([
      threads.run('verify', [stored, 'pw']),
      threads.run('verify', ['$argon2id$broken', 'pw']),
      threads.run('verify', [stored, 'other']),
    ]);
    assert.equal(outcomes[0]?.status === 'fulfilled' && outcomes[0].value, true);
    assert.equal(outcomes[1]?.status, 'rejected');
    assert.equal(outcomes[2]?.status === 'fulfilled' && outcomes[2].value, false);
  });
});
