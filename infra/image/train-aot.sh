#!/usr/bin/env bash
# Makes the JVM's AOT cache for an image built by Jib: runs the image's own entrypoint once with
# -XX:AOTCacheOutput instead of -XX:AOTCache, drives it through every tool with `verify`, stops
# it, and copies the cache out. The cache is only valid for the same JVM and the same class path,
# so it is made inside the image it is meant for; `make image` then rebuilds the image with it.
#
#   infra/image/train-aot.sh <image> <output-dir>
set -euo pipefail

image=${1:?usage: train-aot.sh <image> <output-dir>}
out=${2:?usage: train-aot.sh <image> <output-dir>}

entrypoint=()
while IFS= read -r arg; do
  [[ -n "$arg" ]] && entrypoint+=("$arg")
done < <(docker image inspect --format '{{range .Config.Entrypoint}}{{println .}}{{end}}' "$image")

training=()
found=0
for arg in "${entrypoint[@]}"; do
  if [[ "$arg" == -XX:AOTCache=* ]]; then
    training+=("-XX:AOTCacheOutput=/tmp/aot/app.aot")
    found=1
  else
    training+=("$arg")
  fi
done
if ((found == 0)); then
  echo "train-aot.sh: the entrypoint of $image has no -XX:AOTCache=... argument: ${entrypoint[*]}" >&2
  exit 1
fi

# Runs inside the container: the server in the background, verify against it, then a clean stop
# (the cache is written when the JVM exits).
# shellcheck disable=SC2016 # expanded by the container's shell, not here
script='
set -eu
mkdir -p /tmp/aot /tmp/training-workspace
export MCP_ADDR=127.0.0.1:8000 MCP_WORKSPACE=/tmp/training-workspace
"$@" &
server=$!
tries=0
until curl -sf http://127.0.0.1:8000/healthz >/dev/null; do
  tries=$((tries + 1))
  if [ "$tries" -gt 600 ]; then echo "training server did not become healthy" >&2; exit 1; fi
  sleep 0.1
done
java -cp @/app/jib-classpath-file dev.sandboxmcp.Main verify "http://127.0.0.1:8000${MCP_BASE_PATH:-/mcp-sandbox}" >/tmp/aot/verify.txt || {
  cat /tmp/aot/verify.txt >&2; exit 1; }
kill -TERM "$server"
wait "$server" || true
test -s /tmp/aot/app.aot
'

# A throwaway token for the training server; the cache is checked below not to contain it.
token=$(head -c 36 /dev/urandom | base64 | tr -d '\n/+=')
name="sandbox-mcp-aot-training-$$"
log=$(mktemp)
cleanup() {
  docker rm -f "$name" >/dev/null 2>&1 || true
  rm -f "$log"
}
trap cleanup EXIT

echo "train-aot.sh: training run of $image (server + verify, inside the image, no network)"
# compose.yaml's memory limit, so the heap (a share of it) is sized as it will be at run time:
# on a big host an unbounded training heap would turn compressed oops off, and a cache made
# that way is refused by the JVM that runs with a small heap.
if ! docker run --name "$name" --network none --memory 1g -e MCP_AUTH_TOKEN="$token" --entrypoint /bin/sh "$image" -c "$script" sh "${training[@]}" >"$log" 2>&1; then
  echo "train-aot.sh: the training run failed; its output:" >&2
  tail -n 80 "$log" >&2
  exit 1
fi
mkdir -p "$out"
docker cp "$name:/tmp/aot/app.aot" "$out/app.aot"
if grep -q -F "$token" "$out/app.aot"; then
  rm -f "$out/app.aot"
  echo "train-aot.sh: the AOT cache holds the training run's token; not shipping it" >&2
  exit 1
fi
echo "train-aot.sh: AOT cache $(du -h "$out/app.aot" | cut -f1) in $out/app.aot"
