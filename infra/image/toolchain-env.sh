#!/usr/bin/env bash
# The runner's toolchains, one row each: the Debian packages it brings, its version line and its
# environment. The one list of them: build-base.sh asks it for the packages and the default,
# docs/toolchains.md's table is checked against it (InfraFilesTest).
#
#   toolchain-env.sh --default                     the default SANDBOX_TOOLCHAINS
#   toolchain-env.sh --packages TOOLCHAINS         their Debian packages, comma-separated
#   toolchain-env.sh ROOT TOOLCHAINS VERSIONS_FILE (build-base.sh, inside mmdebstrap: a customize hook)
#
# The last writes the toolchains' environment to ROOT/etc/profile.d/sandbox-mcp.sh and their
# versions, one per line ("go 1.24.4"), to VERSIONS_FILE (the image's dev.sandboxmcp.toolchains
# label). The profile runs in front of every command (`/bin/sh -lc`), after /etc/profile has
# reset PATH: it is static text, shell built-ins only, so it adds no fork to a command's start.
# Its lines are written literally: $HOME and $PATH expand when a command starts.
# shellcheck disable=SC2016
set -euo pipefail

default=go,node,python,c
known="go, node, python, c, java, rust"

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/nonexistent "$@"; }

# toolchain NAME: sets packages; in the image (root set) also writes its version and environment.
toolchain() {
  case "$1" in
    go)
      packages=golang-go
      [[ -n "$root" ]] || return 0
      echo "go $(in_root go env GOVERSION | sed 's/^go//')" >>"$versions"
      # No toolchain downloads (the sandbox's network is off or allow-listed); Go's test binaries
      # run from GOTMPDIR, and /tmp is noexec.
      echo 'export GOTOOLCHAIN=local GOTMPDIR="$HOME/.tmp"; PATH="$HOME/go/bin:$PATH"' >>"$profile"
      ;;
    node)
      packages=nodejs,npm
      [[ -n "$root" ]] || return 0
      echo "node $(in_root node --version | sed 's/^v//')" >>"$versions"
      ;;
    python)
      packages=python3,python3-venv,python3-pip
      [[ -n "$root" ]] || return 0
      echo "python $(in_root python3 --version | sed 's/^Python //')" >>"$versions"
      ;;
    c)
      packages=gcc,g++,libc6-dev,make,pkg-config
      [[ -n "$root" ]] || return 0
      echo "c (gcc $(in_root gcc -dumpfullversion), make)" >>"$versions"
      ;;
    java)
      packages=openjdk-21-jdk-headless,maven
      [[ -n "$root" ]] || return 0
      local javac
      javac=$(in_root readlink -f /usr/bin/javac)
      echo "java (javac $(in_root javac -version 2>&1 | cut -d' ' -f2), maven $(in_root mvn -v | sed -n '1s/^Apache Maven \([^ ]*\).*/\1/p'))" >>"$versions"
      echo "export JAVA_HOME=${javac%/bin/javac}" >>"$profile"
      ;;
    rust)
      packages=rustc,cargo
      [[ -n "$root" ]] || return 0
      echo "rust (rustc $(in_root rustc --version | cut -d' ' -f2), cargo)" >>"$versions"
      echo 'PATH="$HOME/.cargo/bin:$PATH"' >>"$profile"
      ;;
    *)
      echo "toolchain-env: unknown toolchain '$1' in SANDBOX_TOOLCHAINS (known: $known)" >&2
      exit 1
      ;;
  esac
}

# each TOOLCHAINS: runs toolchain for every name of the comma-separated list (spaces ignored).
each() {
  local chosen name
  IFS=, read -r -a chosen <<<"${1// /}"
  for name in "${chosen[@]}"; do
    [[ -z "$name" ]] || { toolchain "$name"; "$2"; }
  done
}

all=
add() { all+=${all:+,}$packages; }

root=
case "${1:-}" in
  --default)
    echo "$default"
    exit 0
    ;;
  --packages)
    each "${2-}" add
    echo "$all"
    exit 0
    ;;
esac

root=${1:?usage: toolchain-env.sh --default | --packages TOOLCHAINS | ROOT TOOLCHAINS VERSIONS_FILE}
toolchains=${2-}
versions=${3:?usage: toolchain-env.sh ROOT TOOLCHAINS VERSIONS_FILE}
: >"$versions"
profile="$root/etc/profile.d/sandbox-mcp.sh"
{
  echo '# sandbox-mcp (toolchain-env.sh): the toolchains'"'"' environment; HOME is the home volume.'
  echo '[ -d "$HOME/.tmp" ] || mkdir -p "$HOME/.tmp" 2>/dev/null'
  echo 'PATH="$HOME/.local/bin:$PATH"'
} >"$profile"
each "$toolchains" :
echo 'export PATH' >>"$profile"
[[ -s "$versions" ]] || echo "none" >"$versions"
