import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const src = url.lastIndexOf('/src/');
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^file:\/\//, '');
}

/** Where a frame's code lives: a package, Gatehouse's src, Node internals, or the engine/GC. */
function owner(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  // node:internal/crypto/sig -> node:internal/crypto: which part of Node, not which file.
  if (url.startsWith('node:internal/')) return url.split('/').slice(0, 2).join('/');
  if (url.startsWith('node:')) return url;
  if (url.includes('/src/')) return 'gatehouse src';
  return url;
}

/** Self time per function and per package from a V8 .cpuprofile (node --cpu-prof). */
export function summariseProfile(
  file: string,
  top = 25,
): { functions: SelfTime[]; owners: SelfTime[]; totalMs: number } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    // Idle time is the server waiting (e.g. while the bare peer was measured): not a cost.
    if (frame === undefined || frame.functionName === '(idle)') continue;
    total += us;
    const name = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    const who = owner(frame.url, frame.functionName);
    owners.set(who, (owners.get(who) ?? 0) + us);
  }
  const rank = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: us / total }));
  return { functions: rank(functions), owners: rank(owners), totalMs: total / 1000 };
}

export function renderProfile(summary: ReturnType<typeof summariseProfile>): string {
  const line = (t: SelfTime) =>
    `${(t.share * 100).toFixed(1).padStart(5)}%  ${t.ms.toFixed(0).padStart(7)} ms  ${t.name}`;
  return [
    `busy time sampled: ${summary.totalMs.toFixed(0)} ms (idle excluded)`,
    'self time by owner:',
    ...summary.owners.map(line),
    'top functions by self time:',
    ...summary.functions.map(line),
  ].join('\n');
}
