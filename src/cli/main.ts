import { runCommandLine } from './command-line.js';

// The `gatehouse` program (bin/gatehouse.js): the command line on this process's own arguments,
// environment and streams. Standard input is reached only when a command reads it (a getter:
// process.stdin opens the descriptor on first use).
const code = await runCommandLine(process.argv.slice(2), {
  env: process.env,
  get stdin() {
    return process.stdin;
  },
  stdout: process.stdout,
  stderr: process.stderr,
});
// -1: the command keeps running (serve), and its handlers end the process.
if (code >= 0) process.exitCode = code;
