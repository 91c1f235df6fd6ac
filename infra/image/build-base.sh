#!/usr/bin/env bash
# Builds the two base images of sandbox-mcp without any container registry, each a Debian root
# filesystem made by mmdebstrap from this machine's own apt sources plus a Java 25 runtime made
# with jlink from the build JDK (at /opt/java, for the sandbox-mcp process only), imported into
# the local Docker daemon:
#   runner  the commands' world: the everyday tools (git, ripgrep, jq, curl, sqlite3...) and the
#           toolchains named in SANDBOX_TOOLCHAINS (their packages: toolchain-env.sh)
#   server  the HTTP server's: the C library, zlib and busybox (sh and wget for its health
#           check) and nothing else: no package manager, no shell tools, no toolchain.
#   proxy   the egress proxy's (no Java): Squid and infra/proxy (its entrypoint, which writes
#           squid.conf from the allow-list at start, and its error pages).
# Usage: infra/image/build-base.sh runner|server|proxy [IMAGE]
#        infra/image/build-base.sh --if-changed runner|server|proxy [IMAGE]  (`make image`: builds
#          only when IMAGE is missing or was built from another recipe)
#        infra/image/build-base.sh --recipe runner|server|proxy  (the digest of that recipe)
# SANDBOX_TOOLCHAINS: comma-separated; the default and the known ones are toolchain-env.sh's.
# DEBIAN_SUITE: default trixie (Debian 13): Go 1.24, Node 20, Python 3.13, GCC 14, where bookworm
# has Go 1.19 and Python 3.11. The mirrors are this machine's own apt sources, pointed at that
# suite; DEBIAN_MIRROR (a URL) replaces them, for machines whose sources are not Debian's.
# Needs root (or fakeroot-capable mmdebstrap modes), mmdebstrap, docker and JAVA_HOME (JDK 25).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
proxy_dir=$(cd "$here/../proxy" && pwd)
toolchains=${SANDBOX_TOOLCHAINS-$("$here/toolchain-env.sh" --default)}
toolchains=${toolchains// /}

die() { echo "build-base: $*" >&2; exit 1; }

# The proxy's configuration (infra/proxy) is written for and tested with Squid 6.13, Debian 13's,
# whatever DEBIAN_SUITE says: Debian 12's Squid (5.7) cuts plain-HTTP uploads (its bug 5405).
suite_of() {
  if [[ "$1" == proxy ]]; then echo trixie; else echo "${DEBIAN_SUITE:-trixie}"; fi
}

# `make image` rebuilds a base when its recipe changes: the label names the recipe's digest,
# which `build-base.sh --recipe FLAVOUR` prints. The runner's includes the toolchain list, the
# proxy's its entrypoint, error pages and health check.
recipe_of() {
  {
    cat "$here/build-base.sh"
    case "$1" in
      runner) cat "$here/profile.sed" "$here/toolchain-env.sh"; echo "$toolchains" ;;
      proxy) (cd "$proxy_dir" && find . -type f | LC_ALL=C sort | xargs cat); cat "$here/healthcheck.sh" ;;
    esac
    echo "$(suite_of "$1") ${DEBIAN_MIRROR:-}"
  } | sha256sum | cut -c1-16
}
if [[ "${1:-}" == --recipe ]]; then
  recipe_of "${2:?usage: build-base.sh --recipe runner|server|proxy}"
  exit 0
fi
if_changed=0
if [[ "${1:-}" == --if-changed ]]; then
  if_changed=1
  shift
fi
flavour=${1:?usage: build-base.sh [--if-changed] runner|server|proxy [IMAGE]}
suite=$(suite_of "$flavour")
case "$flavour" in
  runner)
    image=${2:-sandbox-mcp-runner-base:local}
    # The everyday tools, always; the health check needs netcat-openbsd.
    packages=bash,coreutils,findutils,grep,sed,gawk,diffutils,patch,less,procps,util-linux,psmisc,git,curl,ca-certificates,tini,make,xz-utils,unzip,zip,openssh-client,jq,netcat-openbsd,ripgrep,file,tree,sqlite3
    toolchain_packages=$("$here/toolchain-env.sh" --packages "$toolchains") || exit 1
    packages+=${toolchain_packages:+,$toolchain_packages}
    ;;
  server)
    image=${2:-sandbox-mcp-server-base:local}
    packages=base-files,netbase,libc6,libgcc-s1,zlib1g,busybox
    ;;
  proxy)
    image=${2:-sandbox-mcp-proxy:local}
    packages=squid,iproute2
    ;;
  *)
    echo "build-base: unknown flavour '$flavour' (runner, server or proxy)" >&2
    exit 2
    ;;
esac
recipe=$(recipe_of "$flavour")
if ((if_changed)); then
  built_from=$(docker image inspect --format '{{index .Config.Labels "dev.sandboxmcp.base-recipe"}}' "$image" 2>/dev/null || :)
  if [[ "$built_from" == "$recipe" ]]; then
    echo "build-base: $image is current (recipe $recipe)"
    exit 0
  fi
  if [[ -n "$built_from" ]]; then
    echo "build-base: $image was built from recipe $built_from, not $recipe; building it"
  else
    echo "build-base: $image is missing; building it"
  fi
fi
# Modules the server needs (jdeps on the shaded jar), plus elliptic-curve TLS for `verify` over HTTPS.
modules=java.base,java.desktop,java.instrument,java.management,java.naming,java.net.http,java.rmi,java.security.jgss,java.sql,jdk.crypto.ec,jdk.unsupported,jdk.zipfs
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap)"
command -v docker >/dev/null || die "docker is not installed"
docker info >/dev/null 2>&1 || die "no Docker daemon answers"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# This machine's Debian sources (apt's own view of them), pointed at $suite: "deb URI SUITE main"
# lines for mmdebstrap; bookworm-security becomes trixie-security and so on.
host_mirrors() {
  local host_codename uri release
  # shellcheck source=/dev/null
  host_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [[ -n "$host_codename" ]] || die "cannot tell this machine's Debian codename; set DEBIAN_MIRROR"
  # shellcheck disable=SC2016 # apt's own placeholders
  apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 'COMPONENT: main' | sort -u |
    while read -r uri release; do
      [[ "$release" == "$host_codename" || "$release" == "$host_codename"-* ]] &&
        echo "deb $uri $suite${release#"$host_codename"} main"
    done
}
mirror=()
if [[ -n "${DEBIAN_MIRROR:-}" ]]; then
  mirror=("$DEBIAN_MIRROR")
else
  mapfile -t mirror < <(host_mirrors)
  ((${#mirror[@]})) || die "no Debian source found in this machine's apt configuration; set DEBIAN_MIRROR"
fi
echo "build-base: Debian $suite root filesystem for the $flavour (mmdebstrap: ${mirror[*]})"

if [[ "$flavour" == proxy ]]; then
  # Squid runs as Debian's proxy user (uid 13) from a read-only root; what it writes at run
  # time (its configuration, generated from the allow-list) goes to a tmpfs at /run/egress.
  # shellcheck disable=SC2016
  mmdebstrap --quiet --variant=essential --include="$packages" \
    --customize-hook='copy-in "'"$proxy_dir"'" /opt' \
    --customize-hook='mv "$1/opt/proxy" "$1/opt/egress-proxy" && chmod -R a+rX "$1/opt/egress-proxy"' \
    --customize-hook='cp -n "$1"/usr/share/squid/errors/templates/* "$1/opt/egress-proxy/errors/"' \
    --customize-hook='copy-in "'"$here"'/healthcheck.sh" /opt/egress-proxy' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$suite" "$work/rootfs.tar" "${mirror[@]}"
  docker import \
    --change 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'USER proxy' \
    --change 'ENTRYPOINT ["/opt/egress-proxy/egress-proxy.sh"]' \
    --change "LABEL dev.sandboxmcp.base-recipe=$recipe" \
    --message "sandbox-mcp egress proxy: Debian $suite + Squid" \
    "$work/rootfs.tar" "$image" >/dev/null
  docker run --rm --read-only --entrypoint squid "$image" -v | sed -n 1p
  echo "build-base: done: $image"
  exit 0
fi

[[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/jlink" ]] || die "JAVA_HOME must point at a JDK 25 with jlink"
"$JAVA_HOME/bin/java" -version 2>&1 | grep -q '"25' || die "JAVA_HOME ($JAVA_HOME) is not Java 25"
echo "build-base: Java runtime (jlink: $modules)"
"$JAVA_HOME/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
  --compress=zip-6 --output "$work/java"

if [[ "$flavour" == runner ]]; then
  echo "build-base: toolchains: ${toolchains:-none}"
  # The hooks' "$1" is the root directory, expanded by mmdebstrap, not by this script. Set-uid
  # and set-gid bits are cleared everywhere: nothing in the runner may gain privileges. The
  # init's interpreter is an execute-only copy of bash: a process that executes a file it cannot
  # read is not dumpable, so no command (same user) may ptrace the init (infra/image/runner-init).
  # shellcheck disable=SC2016
  mmdebstrap --quiet --variant=apt --include="$packages" \
    --customize-hook='copy-in "'"$work"'/java" /opt' \
    --customize-hook='install -D -m 0711 "$1/usr/bin/bash" "$1/usr/local/lib/sandbox-mcp/init-shell"' \
    --customize-hook='mkdir -p "$1/workspace" "$1/home/sandbox" && chmod 0777 "$1/workspace"' \
    --customize-hook='sed -i -f "'"$here"'/profile.sed" "$1/etc/profile"' \
    --customize-hook='! grep -nE "id -u|run-parts" "$1/etc/profile"' \
    --customize-hook='"'"$here"'/toolchain-env.sh" "$1" "'"$toolchains"'" "'"$work"'/toolchains"' \
    --customize-hook='find "$1" -xdev -type f -perm /6000 -exec chmod ug-s {} +' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$suite" "$work/rootfs.tar" "${mirror[@]}"
else
  # Only extracted, never configured: nothing of dpkg or apt stays in the image. The extract
  # variant runs no hooks, so the runtime and /bin/sh are appended to the archive.
  mmdebstrap --quiet --variant=extract --include="$packages" "$suite" "$work/rootfs.tar" "${mirror[@]}"
  mkdir -p "$work/extra/bin" "$work/extra/opt"
  ln -s busybox "$work/extra/bin/sh"
  mv "$work/java" "$work/extra/opt/java"
  tar --owner=0 --group=0 -rf "$work/rootfs.tar" -C "$work/extra" ./bin/sh ./opt/java
fi

# The runner's PATH leaves /opt/java out: that runtime is sandbox-mcp's, not the user's JDK.
changes=(--change 'ENV LANG=C.UTF-8' --change "LABEL dev.sandboxmcp.base-recipe=$recipe")
if [[ "$flavour" == runner ]]; then
  changes+=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    --change 'ENV HOME=/home/sandbox'
    --change "LABEL dev.sandboxmcp.toolchains=\"$(awk 'NR > 1 { printf ", " } { printf "%s", $0 }' "$work/toolchains")\"")
else
  changes+=(--change 'ENV PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    --change 'ENV JAVA_HOME=/opt/java' --change 'ENV HOME=/tmp')
fi
echo "build-base: docker import -> $image"
docker import "${changes[@]}" --message "sandbox-mcp $flavour base: Debian $suite + jlink Java 25" \
  "$work/rootfs.tar" "$image" >/dev/null
docker run --rm --read-only --user 1000:1000 "$image" /opt/java/bin/java -version 2>&1 | sed -n 1p
if [[ "$flavour" == runner ]]; then
  docker run --rm --read-only --user 1000:1000 "$image" sh -lc '[ "$(id -u)" = 1000 ] && ! command -v java >/dev/null || command -v javac >/dev/null' ||
    die "the login shell of $image is broken (the patched /etc/profile fails, or the server's runtime is on PATH)"
  docker run --rm --read-only --user 1000:1000 "$image" sh -c \
    '! cat /usr/local/lib/sandbox-mcp/init-shell >/dev/null 2>&1 && /usr/local/lib/sandbox-mcp/init-shell -c "exit 0"' ||
    die "the init's shell in $image is readable by the runner's user, or does not run"
  echo "build-base: toolchains in $image: $(docker image inspect --format '{{index .Config.Labels "dev.sandboxmcp.toolchains"}}' "$image")"
else
  docker run --rm --read-only --user 65532:65532 "$image" sh -c 'busybox timeout 5 busybox wget --help 2>&1 | busybox grep -q Retrieve' ||
    die "$image has no sh or no busybox wget (its health check needs both)"
fi
echo "build-base: done: $image"
