#!/usr/bin/env bash
# The runner's home volume (its HOME: the toolchains' caches, ~/go, ~/.npm): a named volume bound
# to a directory of yours, mode 0700, kept by `make down`.
#
#   infra/compose/home-volume.sh create VOLUME DIR UID:GID  (`make up`: once, when missing)
#   infra/compose/home-volume.sh remove VOLUME DIR          (`make clean-home`: after asking)
set -euo pipefail

action=${1:?usage: home-volume.sh create VOLUME DIR UID:GID | remove VOLUME DIR}
volume=${2:?usage: home-volume.sh create VOLUME DIR UID:GID | remove VOLUME DIR}
dir=${3:?usage: home-volume.sh create VOLUME DIR UID:GID | remove VOLUME DIR}

case "$action" in
  create)
    owner=${4:?usage: home-volume.sh create VOLUME DIR UID:GID}
    docker volume inspect "$volume" >/dev/null 2>&1 && exit 0
    if [[ -d $dir && -n $(ls -A -- "$dir") ]]; then
      echo "home-volume.sh: $dir is not empty: the new volume $volume takes what is in it (make clean-home empties it)" >&2
    fi
    mkdir -p "$dir" && chown "$owner" "$dir" && chmod 0700 "$dir"
    docker volume create --driver local --opt type=none --opt o=bind --opt device="$dir" "$volume" >/dev/null
    echo "created the home volume $volume in $dir"
    ;;
  remove)
    # The directory the volume was made with, if it still exists; else the one given.
    # (docker prints an empty line before it fails for a volume that does not exist)
    if device=$(docker volume inspect --format '{{index .Options "device"}}' "$volume" 2>/dev/null) && [[ -n $device ]]; then
      dir=$device
    fi
    read -r -p "remove the volume $volume and everything in $dir? [y/N] " answer
    [[ "$answer" == y ]] || { echo "kept"; exit 0; }
    if docker volume inspect "$volume" >/dev/null 2>&1 && ! docker volume rm "$volume" >/dev/null; then
      echo "the volume is in use: run make down first" >&2
      exit 1
    fi
    # Read-only directories (Go's module cache; or a command's doing) would stop rm part way:
    # made writable first (chmod -R follows no link).
    chmod -R u+rwX -- "$dir" 2>/dev/null || true
    rm -rf -- "$dir"
    echo "removed $dir"
    ;;
  *)
    echo "home-volume.sh: unknown action '$action' (create or remove)" >&2
    exit 2
    ;;
esac
