#!/usr/bin/env bash
# check-workspace.sh WORKSPACE: refuses (exit 2) a workspace that holds what your machine runs or
# trusts, since any command in the sandbox may rewrite anything in it: this checkout (its Makefile,
# compose files and pom.xml, which make runs, the audit's jar, and .env with the token), your home
# directory (your shell's files) or a hidden directory in it, a directory on your PATH, your XDG
# directories, what a link in your home points to, the runner's home directory (SANDBOX_HOME_DIR)
# and the audit's record of what you accepted. A relative PATH entry ('.') is warned about. `make up`, `make audit` and `make watch-install` run it first.
set -euo pipefail
shopt -s nullglob

if [[ ${1:?usage: check-workspace.sh WORKSPACE} != /* ]]; then
  # make and the scripts would take it from here, compose from infra/compose/: two directories
  echo "check-workspace.sh: SANDBOX_WORKSPACE must be an absolute path, not '$1'" >&2
  exit 2
fi
workspace=$(realpath -e -- "$1")
checkout=$(realpath -e -- "$(dirname -- "${BASH_SOURCE[0]}")/../..")

inside() { [[ $workspace == / || $1 == "$workspace" || $1 == "$workspace"/* ]]; } # inside WORKSPACE
within() { [[ $workspace == "$1" || $workspace == "$1"/* ]]; } # WORKSPACE inside it
refuse() {
  echo "check-workspace.sh: the workspace $workspace $1 ($2), which any command in the sandbox could" \
    "then rewrite; set SANDBOX_WORKSPACE to a directory apart from it" >&2
  exit 2
}
# What may be neither in the workspace nor around it: NAME PATH
apart() {
  local path
  path=$(realpath -m -- "$2")
  if inside "$path"; then refuse "holds $1" "$path"; fi
  if within "$path"; then refuse "is inside $1" "$path"; fi
}

apart "this checkout of sandbox-mcp" "$checkout"
# Your home may hold the workspace (~/Development), not the other way round; under sudo, yours too.
homes=("${HOME:-}")
if [[ -n ${SUDO_USER:-} ]]; then homes+=("$(getent passwd "$SUDO_USER" | cut -d: -f6)"); fi
for home in "${homes[@]}"; do
  if [[ $home == /* ]] && inside "$(realpath -m -- "$home")"; then refuse "holds your home directory" "$home"; fi
done
# Nor lie in a hidden directory of it (~/.config, ~/.local, ~/.ssh ...): your programs keep there
# what they run and trust (git's own config, systemd units, shell and editor settings).
for home in "${homes[@]}"; do
  [[ $home == /* ]] || continue
  home=$(realpath -m -- "$home")
  if [[ $home != / && $workspace == "$home"/.* ]]; then
    rest=${workspace#"$home"/}
    refuse "is inside a hidden directory of your home" "$home/${rest%%/*}"
  fi
done
# A directory on your PATH: a planted git or ls there would run as you (bash expands a leading ~).
IFS=: read -ra path_dirs <<< "${PATH:-}"
for dir in "${path_dirs[@]}"; do
  if [[ $dir == \~ || $dir == \~/* ]]; then dir=${HOME:-}${dir:1}; fi
  if [[ $dir == /* ]]; then
    if inside "$(realpath -m -- "$dir")"; then refuse "holds a directory on your PATH" "$dir"; fi
  else
    echo "check-workspace.sh: warning: your PATH holds '${dir:-an empty entry}', taken from the directory you are in:" \
      "in the workspace, a program the sandbox plants there runs as you when you type its name" >&2
  fi
done
# Where your programs keep their configuration, when set elsewhere than your home.
for var in XDG_CONFIG_HOME XDG_DATA_HOME XDG_BIN_HOME; do
  if [[ ${!var:-} == /* ]]; then apart "$var" "${!var}"; fi
done
# Links from your home into the workspace (dotfiles managed with stow, a tool linked into ~/.local/bin).
for home in "${homes[@]}"; do
  [[ $home == /* && -d $home ]] || continue
  for link in "$home"/.[!.]* "$home"/.config/* "$home"/.local/bin/*; do
    if [[ -L $link ]] && inside "$(realpath -m -- "$link")"; then refuse "holds what $link points to" "$(realpath -m -- "$link")"; fi
  done
done
if [[ -n ${SANDBOX_HOME_DIR:-} ]]; then apart "the runner's home directory" "$SANDBOX_HOME_DIR"; fi
state=${XDG_STATE_HOME:-${HOME:-}/.local/state}/sandbox-mcp
if [[ $state == /* ]]; then apart "the audit's record of what you accepted" "$state"; fi
exit 0
