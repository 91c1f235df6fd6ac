#!/usr/bin/env bash
# Builds the two base images of sandbox-mcp without any container registry, each a Debian root
# filesystem made by mmdebstrap from this machine's own apt sources plus a Java 25 runtime made
# with jlink from the build JDK (at /opt/java), imported into the local Docker daemon:
#   runner  the commands' world: bash, git, coreutils, procps, curl, netcat (its health check)...
#   server  the HTTP server's: the C library, zlib and busybox (sh and wget for its health
#           check) and nothing else: no package manager, no shell tools, no toolchain.
#   proxy   the egress proxy's (no Java): Squid, infra/proxy (its entrypoint, which writes
#           squid.conf from the allow-list at start, and its error pages) and healthcheck.sh.
# Usage: infra/image/build-base.sh runner|server|proxy [IMAGE]
#        infra/image/build-base.sh --recipe [proxy]  (prints the digest of the recipe: of the
#        runner's and server's together, or of the proxy's, which also covers infra/proxy and
#        healthcheck.sh)
# DEBIAN_MIRROR: a Debian mirror URL, for machines whose own apt sources are not Debian's
# (for instance an Ubuntu CI runner); by default the machine's own sources are used.
# Needs root (or fakeroot-capable mmdebstrap modes), mmdebstrap, docker and JAVA_HOME (JDK 25).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# `make image` rebuilds a base when this recipe changes: the label names the recipe's digest,
# which `build-base.sh --recipe` prints.
recipe=$(cat "$here/build-base.sh" "$here/profile.sed" | sha256sum | cut -c1-16)
proxy_dir=$(cd "$here/../proxy" && pwd)
if [[ "${1:-}" == proxy || "${2:-}" == proxy ]]; then
  recipe=$( (cd "$proxy_dir" && find . -type f | LC_ALL=C sort | xargs cat; cat "$here/healthcheck.sh"; echo "$recipe") |
    sha256sum | cut -c1-16)
fi
if [[ "${1:-}" == --recipe ]]; then
  echo "$recipe"
  exit 0
fi
flavour=${1:?usage: build-base.sh runner|server|proxy [IMAGE]}
suite=${DEBIAN_SUITE:-bookworm}
case "$flavour" in
  runner)
    image=${2:-sandbox-mcp-runner-base:local}
    packages=bash,coreutils,findutils,grep,sed,gawk,diffutils,patch,less,procps,util-linux,psmisc,git,curl,ca-certificates,tini,make,xz-utils,unzip,zip,openssh-client,jq,netcat-openbsd
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
# Modules the server needs (jdeps on the shaded jar), plus elliptic-curve TLS for `verify` over HTTPS.
modules=java.base,java.desktop,java.instrument,java.management,java.naming,java.net.http,java.rmi,java.security.jgss,java.sql,jdk.crypto.ec,jdk.unsupported,jdk.zipfs

die() { echo "build-base: $*" >&2; exit 1; }
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap)"
command -v docker >/dev/null || die "docker is not installed"
docker info >/dev/null 2>&1 || die "no Docker daemon answers"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Without a mirror argument mmdebstrap uses the apt sources configured on this machine.
mirror=()
if [[ -n "${DEBIAN_MIRROR:-}" ]]; then
  mirror=("$DEBIAN_MIRROR")
fi
if [[ "$flavour" == proxy ]]; then
  echo "build-base: Debian $suite root filesystem for the egress proxy (mmdebstrap, this machine's apt sources)"
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

echo "build-base: Debian $suite root filesystem for the $flavour (mmdebstrap, this machine's apt sources)"
if [[ "$flavour" == runner ]]; then
  # The hooks' "$1" is the root directory, expanded by mmdebstrap, not by this script.
  # shellcheck disable=SC2016
  mmdebstrap --quiet --variant=apt --include="$packages" \
    --customize-hook='copy-in "'"$work"'/java" /opt' \
    --customize-hook='ln -sf /opt/java/bin/java "$1/usr/local/bin/java"' \
    --customize-hook='mkdir -p "$1/workspace" && chmod 0777 "$1/workspace"' \
    --customize-hook='sed -i -f "'"$here"'/profile.sed" "$1/etc/profile"' \
    --customize-hook='! grep -n "id -u" "$1/etc/profile"' \
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

echo "build-base: docker import -> $image"
docker import \
  --change 'ENV PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV JAVA_HOME=/opt/java' \
  --change 'ENV LANG=C.UTF-8' \
  --change "LABEL dev.sandboxmcp.base-recipe=$recipe" \
  --message "sandbox-mcp $flavour base: Debian $suite + jlink Java 25" \
  "$work/rootfs.tar" "$image" >/dev/null
docker run --rm --read-only --user 1000:1000 "$image" java -version 2>&1 | sed -n 1p
if [[ "$flavour" == runner ]]; then
  docker run --rm --read-only --user 1000:1000 "$image" sh -lc 'command -v java >/dev/null && [ "$(id -u)" = 1000 ]' ||
    die "the login shell of $image is broken (no java on PATH, or the patched /etc/profile fails)"
else
  docker run --rm --read-only --user 65532:65532 "$image" sh -c 'busybox timeout 5 busybox wget --help 2>&1 | busybox grep -q Retrieve' ||
    die "$image has no sh or no busybox wget (its health check needs both)"
fi
echo "build-base: done: $image"
