/**
 * Summarises a V8 CPU profile written by `node --cpu-prof` (e.g. by `npm run bench -- --profile`):
 * self time per package and per function. Usage: node dist/bench/profile-summary.js FILE [TOP]
 */
import { renderProfile, summariseProfile } from './lib/cpu-profile.js';

const [file, top] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: profile-summary FILE.cpuprofile [TOP]\n');
  process.exit(2);
}
process.stdout.write(renderProfile(summariseProfile(file, top === undefined ? 25 : Number(top))) + '\n');
