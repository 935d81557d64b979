import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest directory above this module whose package.json is Gatehouse's. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (name === 'gatehouse-oauth') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

/**
 * Replaces the text between `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->` in a Markdown file,
 * appending the block when absent, so generated results sit beside hand-written explanation.
 */
export async function writeBlock(file: string, name: string, content: string): Promise<void> {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${start}\n${content.trimEnd()}\n${end}`;
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  const next =
    from >= 0 && to > from
      ? text.slice(0, from) + block + text.slice(to + end.length)
      : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, await formatMarkdown(file, next));
}

/** Formats with the repository's Prettier settings, so `npm run lint` stays green after a run. */
async function formatMarkdown(file: string, text: string): Promise<string> {
  try {
    const prettier = await import('prettier');
    const options = (await prettier.resolveConfig(file)) ?? {};
    return await prettier.format(text, { ...options, filepath: file });
  } catch {
    return text; // Prettier is a dev dependency; without it the file is merely unformatted.
  }
}
