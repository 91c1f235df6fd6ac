#!/usr/bin/env bash
# Prints the home of a Java 25 JDK (java, javac and jlink of version 25) and exits 0, or prints
# nothing and exits 1. Looks at JAVA_HOME first, then the directories under SANDBOX_JDK_DIRS
# (default /usr/lib/jvm; colon-separated), then javac on PATH. The Makefile, .ci/run and
# infra/host/deps.sh all find the JDK here.
set -uo pipefail

is_jdk25() {
  local home=$1
  [[ -x "$home/bin/java" && -x "$home/bin/javac" && -x "$home/bin/jlink" ]] || return 1
  "$home/bin/java" -version 2>&1 | head -n 1 | grep -Eq 'version "25([.-][^"]*)?"'
}

candidates=()
[[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
IFS=: read -r -a dirs <<<"${SANDBOX_JDK_DIRS:-/usr/lib/jvm}"
for dir in "${dirs[@]}"; do
  # Names with 25 in them first (temurin-25-jdk-amd64, java-25-openjdk-amd64), then the rest.
  for home in "$dir"/*25* "$dir"/*; do
    [[ -d "$home" ]] && candidates+=("$home")
  done
done
if javac_path=$(command -v javac 2>/dev/null); then
  candidates+=("$(dirname "$(dirname "$(readlink -f "$javac_path")")")")
fi

for home in "${candidates[@]}"; do
  if is_jdk25 "$home"; then
    echo "$home"
    exit 0
  fi
done
exit 1
