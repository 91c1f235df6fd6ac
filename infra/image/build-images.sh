#!/usr/bin/env bash
# Builds the server and runner images into the local Docker daemon (`make image`): the bases
# when missing or built from another recipe (build-base.sh --if-changed, and the egress proxy's),
# the jar, both images with Jib, their AOT caches from one training run of the pair
# (train-aot.sh), then both images again with those caches.
#
#   infra/image/build-images.sh
#
# From the environment (the Makefile passes its variables): SERVER_IMAGE, RUNNER_IMAGE,
# SERVER_BASE_IMAGE, RUNNER_BASE_IMAGE, PROXY_IMAGE; SANDBOX_UID:SANDBOX_GID, the runner's user,
# and SANDBOX_SERVER_UID:SANDBOX_SERVER_GID, the server's, which must differ; MVN, the Maven
# command. Both images carry the runner base's toolchain label (the server's instructions name
# the toolchains).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
: "${SERVER_IMAGE:?}" "${RUNNER_IMAGE:?}" "${SERVER_BASE_IMAGE:?}" "${RUNNER_BASE_IMAGE:?}" "${PROXY_IMAGE:?}"
: "${SANDBOX_UID:?}" "${SANDBOX_GID:?}" "${SANDBOX_SERVER_UID:?}" "${SANDBOX_SERVER_GID:?}"
read -r -a mvn <<<"${MVN:-mvn -B --no-transfer-progress}"
aot=app/target/aot-cache

if [[ "$SANDBOX_UID" == "$SANDBOX_SERVER_UID" ]]; then
  echo "build-images: the server's user ($SANDBOX_SERVER_UID) must differ from the runner's; set SANDBOX_SERVER_UID" >&2
  exit 2
fi

"$here/build-base.sh" --if-changed runner "$RUNNER_BASE_IMAGE"
"$here/build-base.sh" --if-changed server "$SERVER_BASE_IMAGE"
"$here/build-base.sh" --if-changed proxy "$PROXY_IMAGE"
toolchains=$(docker image inspect --format '{{index .Config.Labels "dev.sandboxmcp.toolchains"}}' "$RUNNER_BASE_IMAGE")

# One image with Jib: jib IMAGE BASE USER MODE(runner|serve) HEAP_PERCENT AOT_DIR LAUNCHER
jib() {
  "${mvn[@]}" -pl app jib:dockerBuild -Dimage.name="$1" -Dimage.base="docker://$2" -Dimage.user="$3" \
    -Dimage.mode="$4" -Dimage.heap.percent="$5" -Dimage.aot.dir="$PWD/$aot/$6" -Dimage.launcher="$7" \
    -Dimage.toolchains="$toolchains"
}

# The runner's JVM is started by its own init (infra/image/runner-init), the server's directly.
both() {
  jib "$RUNNER_IMAGE" "$RUNNER_BASE_IMAGE" "$SANDBOX_UID:$SANDBOX_GID" runner 10 runner /app/bin/runner-init
  jib "$SERVER_IMAGE" "$SERVER_BASE_IMAGE" "$SANDBOX_SERVER_UID:$SANDBOX_SERVER_GID" serve 25 server /opt/java/bin/java
}

rm -rf "$aot" && mkdir -p "$aot/server" "$aot/runner"
"${mvn[@]}" -pl app -am package -DskipTests
both
"$here/train-aot.sh" "$SERVER_IMAGE" "$RUNNER_IMAGE" "$aot"
both
