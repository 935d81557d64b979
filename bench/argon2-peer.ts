/**
 * The password grant's peer: Gatehouse's own verifyPassword (argon2id at OWASP cost) in a loop, with
 * `--concurrency` verifications in flight (libuv's default pool is 4 threads), for `--seconds`.
 * Run pinned to the server's core, it says what one core of this machine can verify right now, which
 * the password grant is then compared with. Prints one JSON line.
 */
import { parseArgs } from 'node:util';
import { hashPassword, verifyPassword } from '../src/core/users/passwords.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '4' } },
});
const seconds = Number(values.seconds);
const password = 'bench-password-peer';
const stored = await hashPassword(password);
await verifyPassword(stored, password); // warm-up

let verified = 0;
const cpu = process.cpuUsage();
const start = process.hrtime.bigint();
const deadline = Date.now() + seconds * 1000;
await Promise.all(
  Array.from({ length: Number(values.concurrency) }, async () => {
    while (Date.now() < deadline) {
      if (!(await verifyPassword(stored, password))) throw new Error('verification failed');
      verified++;
    }
  }),
);
const wall = Number(process.hrtime.bigint() - start) / 1e9;
const used = process.cpuUsage(cpu);
const cpuSeconds = (used.user + used.system) / 1e6;
process.stdout.write(
  JSON.stringify({
    perSecond: verified / wall,
    cpu: cpuSeconds / wall,
    cpuMsPerVerify: (cpuSeconds * 1000) / verified,
  }) + '\n',
);
