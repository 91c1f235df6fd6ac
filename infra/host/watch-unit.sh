#!/usr/bin/env bash
# watch-unit.sh install JAVA JAR WORKSPACE [OVERRIDE] | uninstall: the systemd user unit that runs
# `sandbox-mcp audit --watch [--protected OVERRIDE] WORKSPACE` (infra/host/sandbox-mcp-audit-watch.service), for
# `make watch-install` and `make watch-uninstall`. The jar is copied beside the unit's data, so
# that `mvn clean` or a checkout elsewhere does not stop the watcher.
#
#   SYSTEMD_USER_DIR   where the unit goes (default ${XDG_CONFIG_HOME:-~/.config}/systemd/user)
#   SANDBOX_WATCH_DIR  where the jar copy goes (default ${XDG_DATA_HOME:-~/.local/share}/sandbox-mcp)
#   SYSTEMCTL          the systemctl to run (default systemctl; the tests give a stand-in)
set -euo pipefail

unit=sandbox-mcp-audit-watch.service
dir=${SYSTEMD_USER_DIR:-${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user}
data=${SANDBOX_WATCH_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/sandbox-mcp}
systemctl=${SYSTEMCTL:-systemctl}
here=$(dirname -- "$(realpath -- "$0")")
usage="usage: watch-unit.sh install JAVA JAR WORKSPACE [OVERRIDE] | uninstall"

# One word of a systemd command line or assignment: quoted, with \, ", % and $ escaped.
word() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//%/%%}
  s=${s//\$/\$\$}
  printf '"%s"' "$s"
}

case ${1:-} in
  install)
    (($# == 4 || $# == 5)) || { echo "$usage" >&2; exit 2; }
    java=$(realpath -e -- "$2") || { echo "watch-unit.sh: no Java at $2" >&2; exit 2; }
    jar=$(realpath -e -- "$3") || { echo "watch-unit.sh: no jar at $3 (make build)" >&2; exit 2; }
    workspace=$(realpath -e -- "$4") || { echo "watch-unit.sh: no workspace at $4" >&2; exit 2; }
    [[ $workspace != *$'\n'* ]] || { echo "watch-unit.sh: a newline in the workspace's path: $workspace" >&2; exit 2; }
    protected=
    if (($# == 5)); then
      # make up's override, read each round: a repository it does not protect is reported.
      override=$(realpath -e -- "$5") || { echo "watch-unit.sh: no override at $5 (make up writes it)" >&2; exit 2; }
      [[ $override != *$'\n'* ]] || { echo "watch-unit.sh: a newline in the override's path: $override" >&2; exit 2; }
      protected="--protected $(word "$override") "
    fi
    mkdir -p -- "$dir" "$data"
    cp -- "$jar" "$data/sandbox-mcp-audit.jar.tmp"
    mv -- "$data/sandbox-mcp-audit.jar.tmp" "$data/sandbox-mcp-audit.jar"
    environment=
    # The baseline lives where make audit keeps it: the same XDG_STATE_HOME.
    [[ -z ${XDG_STATE_HOME:-} ]] || environment="Environment=$(word "XDG_STATE_HOME=$XDG_STATE_HOME")"
    text=$(<"$here/$unit")
    text=${text//@JAVA@/"$(word "$java")"}
    text=${text//@JAR@/"$(word "$data/sandbox-mcp-audit.jar")"}
    text=${text//@WORKSPACE@/"$protected$(word "$workspace")"}
    text=${text//@WORKSPACE_NAME@/"${workspace//%/%%}"}
    text=${text//@ENVIRONMENT@/"$environment"}
    printf '%s\n' "$text" > "$dir/$unit.tmp"
    mv -- "$dir/$unit.tmp" "$dir/$unit"
    "$systemctl" --user daemon-reload
    "$systemctl" --user enable --now "$unit"
    "$systemctl" --user restart "$unit" # a reinstall runs the new jar
    echo "watch-unit.sh: $unit watches $workspace; what it reports: journalctl --user -u ${unit%.service} -f"
    ;;
  uninstall)
    "$systemctl" --user disable --now "$unit" 2>/dev/null || true
    rm -f -- "$dir/$unit" "$data/sandbox-mcp-audit.jar"
    "$systemctl" --user daemon-reload
    echo "watch-unit.sh: $unit removed"
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
