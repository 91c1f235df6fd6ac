#!/usr/bin/env bash
# check-workspace.sh WORKSPACE: refuses (exit 2) a workspace that holds what your machine runs or
# trusts, since any command in the sandbox may rewrite anything in it: this checkout (its Makefile,
# compose files and pom.xml, which make runs, the audit's jar, and .env with the token), your home
# directory (your shell's files), the runner's home directory (SANDBOX_HOME_DIR) and the audit's
# record of what you accepted. `make up`, `make audit` and `make watch-install` run it first.
set -euo pipefail

workspace=$(realpath -e -- "${1:?usage: check-workspace.sh WORKSPACE}")
checkout=$(realpath -e -- "$(dirname -- "${BASH_SOURCE[0]}")/../..")

inside() { [[ $1 == "$workspace" || $1 == "$workspace"/* ]]; }
refuse() {
  echo "check-workspace.sh: the workspace $workspace holds $1 ($2), which any command in the sandbox could" \
    "then rewrite; set SANDBOX_WORKSPACE to a directory that holds none of it" >&2
  exit 2
}

if inside "$checkout"; then refuse "this checkout of sandbox-mcp" "$checkout"; fi
if [[ -n ${HOME:-} ]] && inside "$(realpath -m -- "$HOME")"; then refuse "your home directory" "$HOME"; fi
if [[ -n ${SANDBOX_HOME_DIR:-} ]] && inside "$(realpath -m -- "$SANDBOX_HOME_DIR")"; then
  refuse "the runner's home directory" "$SANDBOX_HOME_DIR"
fi
state=${XDG_STATE_HOME:-${HOME:-}/.local/state}/sandbox-mcp
if [[ $state == /* ]] && inside "$(realpath -m -- "$state")"; then
  refuse "the audit's record of what you accepted" "$state"
fi
exit 0
