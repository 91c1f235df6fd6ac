#!/usr/bin/env bash
# Makes the JVM's AOT caches for the two images built by Jib: runs the runner and the server
# from their own images, as a pair sharing the channel volume, with -XX:AOTCacheOutput instead of
# -XX:AOTCache, drives every tool through them with `verify`, stops both, and copies each cache
# out. A cache is only valid for the same JVM and the same class path, so each is made inside
# the image it is meant for; `make image` then rebuilds both images with their caches.
#
#   infra/image/train-aot.sh <server-image> <runner-image> <output-dir>
#   (writes <output-dir>/server/app.aot and <output-dir>/runner/app.aot)
set -euo pipefail

server_image=${1:?usage: train-aot.sh <server-image> <runner-image> <output-dir>}
runner_image=${2:?usage: train-aot.sh <server-image> <runner-image> <output-dir>}
out=${3:?usage: train-aot.sh <server-image> <runner-image> <output-dir>}

# The image's entrypoint with -XX:AOTCache=... turned into -XX:AOTCacheOutput=/tmp/app.aot, and
# the training run's method profiles (JEP 515) left out of the cache: with them the pair idled
# about 2 MiB higher (150.3 against 148.4 MiB, five starts each) and started no faster, and the
# first seconds of calls were no quicker (BENCHMARKS.md). Both flags are read only here, by the
# training JVM; one that a later JDK no longer knows stops that JVM, and this script with it.
training_entrypoint() {
  local image=$1 arg found=0
  while IFS= read -r arg; do
    [[ -z "$arg" ]] && continue
    if [[ "$arg" == -XX:AOTCache=* ]]; then
      printf '%s\n' "-XX:AOTCacheOutput=/tmp/app.aot" -XX:+UnlockDiagnosticVMOptions -XX:-AOTRecordTraining
      found=1
    else
      printf '%s\n' "$arg"
    fi
  done < <(docker image inspect --format '{{range .Config.Entrypoint}}{{println .}}{{end}}' "$image")
  if ((found == 0)); then
    echo "train-aot.sh: the entrypoint of $image has no -XX:AOTCache=... argument" >&2
    return 1
  fi
}
mapfile -t server_run < <(training_entrypoint "$server_image")
mapfile -t runner_run < <(training_entrypoint "$runner_image")
((${#server_run[@]} > 1 && ${#runner_run[@]} > 1)) || exit 1

# A throwaway token for the training server; its cache is checked below not to contain it.
token=$(head -c 36 /dev/urandom | base64 | tr -d '\n/+=')
prefix="sandbox-mcp-aot-training-$$"
cleanup() {
  docker rm -f "$prefix-server" "$prefix-runner" >/dev/null 2>&1 || true
  docker volume rm -f "$prefix-channel" >/dev/null 2>&1 || true
}
trap cleanup EXIT
fail() {
  echo "train-aot.sh: $*; the containers' output:" >&2
  docker logs --tail 60 "$prefix-runner" >&2 2>&1 || true
  docker logs --tail 60 "$prefix-server" >&2 2>&1 || true
  exit 1
}

echo "train-aot.sh: training run of $server_image and $runner_image (verify through every tool, no network)"
# The channel volume is the server's (its image's user) and the runner mounts it read-only, as in compose.yaml.
server_user=$(docker image inspect --format '{{.Config.User}}' "$server_image")
docker volume create --driver local --opt type=tmpfs --opt device=tmpfs \
  --opt o="mode=0755,uid=${server_user%%:*},gid=${server_user##*:},size=1m" "$prefix-channel" >/dev/null
# compose.yaml's memory limits, so that each heap (a share of it) is sized as it will be at run
# time: on a big host an unbounded training heap would turn compressed oops off, and a cache
# made that way is refused by the JVM that runs with a small heap.
# A disk floor of 1 MiB (the server states it to the runner): the watch runs (its code goes into
# the cache), and the training's workspace, the container's own layer on whatever disk builds
# the image, may be nearly full.
docker run -d --name "$prefix-runner" --network none --memory 1g -v "$prefix-channel:/run/sandbox-mcp:ro" \
  --entrypoint "${runner_run[0]}" "$runner_image" "${runner_run[@]:1}" >/dev/null
docker run -d --name "$prefix-server" --network none --memory 512m -v "$prefix-channel:/run/sandbox-mcp" \
  -e MCP_AUTH_TOKEN="$token" -e MCP_ADDR=127.0.0.1:8000 -e MCP_DISK_FLOOR_MIB=1 -e MCP_DISK_FLOOR_PERCENT=0 \
  --init --entrypoint "${server_run[0]}" "$server_image" "${server_run[@]:1}" >/dev/null
for _ in $(seq 1 600); do
  docker exec "$prefix-server" busybox wget -q -O /dev/null http://127.0.0.1:8000/healthz 2>/dev/null && break
  sleep 0.1
done
if ! checklist=$(docker exec -e MCP_AUTH_TOKEN="$token" "$prefix-server" java -cp @/app/jib-classpath-file \
  dev.sandboxmcp.Main verify http://127.0.0.1:8000/mcp-sandbox 2>&1); then
  echo "$checklist" >&2
  fail "verify failed against the training pair"
fi
# The caches are written as the JVMs exit.
docker stop -t 60 "$prefix-server" "$prefix-runner" >/dev/null
for role in server runner; do
  mkdir -p "$out/$role"
  docker cp "$prefix-$role:/tmp/app.aot" "$out/$role/app.aot" >/dev/null 2>&1 || fail "the $role wrote no AOT cache"
  if grep -q -F "$token" "$out/$role/app.aot"; then
    rm -f "$out/$role/app.aot"
    fail "the $role's AOT cache holds the training run's token; not shipping it"
  fi
  echo "train-aot.sh: $role AOT cache $(du -h "$out/$role/app.aot" | cut -f1) in $out/$role/app.aot"
done
