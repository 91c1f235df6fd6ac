#!/usr/bin/env bash
# Run by build-base.sh inside mmdebstrap (a customize hook) for the runner image: writes the
# toolchains' environment to ROOT/etc/profile.d/sandbox-mcp.sh and their versions, one per line
# ("go 1.24.4"), to VERSIONS_FILE (the image's dev.sandboxmcp.toolchains label).
# The profile runs in front of every command (`/bin/sh -lc`), after /etc/profile has reset PATH:
# it is static text, shell built-ins only, so it adds no fork to a command's start.
# Usage: toolchain-env.sh ROOT TOOLCHAINS(comma-separated) VERSIONS_FILE
# The profile's lines are written literally: $HOME and $PATH expand when a command starts.
# shellcheck disable=SC2016
set -euo pipefail
root=$1
toolchains=$2
versions=$3

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/nonexistent "$@"; }

: >"$versions"
profile="$root/etc/profile.d/sandbox-mcp.sh"
{
  echo '# sandbox-mcp (toolchain-env.sh): the toolchains'"'"' environment; HOME is the home volume.'
  echo '[ -d "$HOME/.tmp" ] || mkdir -p "$HOME/.tmp" 2>/dev/null'
  echo 'PATH="$HOME/.local/bin:$PATH"'
} >"$profile"

IFS=, read -r -a chosen <<<"$toolchains"
for toolchain in "${chosen[@]}"; do
  case "$toolchain" in
    go)
      echo "go $(in_root go env GOVERSION | sed 's/^go//')" >>"$versions"
      # No toolchain downloads (the sandbox's network is off or allow-listed); Go's test binaries
      # run from GOTMPDIR, and /tmp is noexec.
      echo 'export GOTOOLCHAIN=local GOTMPDIR="$HOME/.tmp"; PATH="$HOME/go/bin:$PATH"' >>"$profile"
      ;;
    node) echo "node $(in_root node --version | sed 's/^v//')" >>"$versions" ;;
    python) echo "python $(in_root python3 --version | sed 's/^Python //')" >>"$versions" ;;
    c) echo "c (gcc $(in_root gcc -dumpfullversion), make)" >>"$versions" ;;
    java)
      javac=$(in_root readlink -f /usr/bin/javac)
      echo "java (javac $(in_root javac -version 2>&1 | cut -d' ' -f2), maven $(in_root mvn -v | sed -n '1s/^Apache Maven \([^ ]*\).*/\1/p'))" >>"$versions"
      echo "export JAVA_HOME=${javac%/bin/javac}" >>"$profile"
      ;;
    rust)
      echo "rust (rustc $(in_root rustc --version | cut -d' ' -f2), cargo)" >>"$versions"
      echo 'PATH="$HOME/.cargo/bin:$PATH"' >>"$profile"
      ;;
    "") ;;
    *) echo "toolchain-env: unknown toolchain '$toolchain'" >&2; exit 1 ;;
  esac
done
echo 'export PATH' >>"$profile"
[[ -s "$versions" ]] || echo "none" >"$versions"
