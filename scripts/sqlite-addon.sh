#!/usr/bin/env bash
# Gives this checkout's better-sqlite3 its native addon for the machine's Node, from a cache outside the
# repository when one was built before, else compiled (node-gyp, minutes on a busy 2-core machine) and
# cached. Run after `npm ci --ignore-scripts`: CI's clean clones then compile SQLite once per machine
# and version instead of once per run (.ci/run).
#
# GATEHOUSE_ADDON_CACHE overrides the cache directory (default ~/.cache/gatehouse/addons). The key is
# better-sqlite3's version, Node's ABI (NODE_MODULE_VERSION) and exact version (the addon is compiled
# against the running Node's headers), the platform and the architecture; a cached addon is used only
# after it loads and opens a database.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${GATEHOUSE_ADDON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse/addons}"
mkdir -p "$cache"
package="$repo/node_modules/better-sqlite3"
[ -f "$package/package.json" ] || { echo "sqlite-addon: run npm ci first ($package is missing)" >&2; exit 1; }

version="$(node -p 'require(process.argv[1]).version' "$package/package.json")"
key="better-sqlite3-$version-node$(node -p 'process.version + "-abi" + process.versions.modules + "-" + process.platform + "-" + process.arch')"
addon="$cache/$key.node"
release="$package/build/Release"
loads() { (cd "$repo" && node -e 'new (require("better-sqlite3"))(":memory:").close()') >/dev/null 2>&1; }

if [ -f "$addon" ]; then
  mkdir -p "$release"
  # Removed first: a checkout whose node_modules are hard links to another's must not write through them.
  rm -f "$release/better_sqlite3.node"
  cp "$addon" "$release/better_sqlite3.node"
  if loads; then
    echo "sqlite-addon: better-sqlite3 $version from the cache ($addon)"
    exit 0
  fi
  echo "sqlite-addon: the cached addon does not load; building it again" >&2
  rm -f "$addon"
fi
echo "sqlite-addon: building better-sqlite3 $version for Node $(node --version)"
(cd "$repo" && npm rebuild better-sqlite3 --foreground-scripts >"$cache/.build-$key.log" 2>&1) || {
  tail -40 "$cache/.build-$key.log" >&2
  exit 1
}
loads || { echo "sqlite-addon: the addon just built does not load" >&2; exit 1; }
cp "$release/better_sqlite3.node" "$addon.partial.$$" && mv "$addon.partial.$$" "$addon"
echo "sqlite-addon: built and cached ($addon)"
