#!/bin/sh
# Usage (in a private mount namespace, as `unshare -m sh on-tmpfs.sh ...`):
#   on-tmpfs.sh <size> <dir> [<size> <dir> ...] -- <command> [<arguments>...]
# Mounts a tmpfs of each size on each folder (created if missing), then becomes the command. The
# mounts are seen by the command alone (and through /proc/<its pid>/root by its parent), and go with it.
set -eu
while [ "$1" != "--" ]; do
  mkdir -p "$2"
  mount -t tmpfs -o "size=$1" mediaflow-test "$2"
  shift 2
done
shift
exec "$@"
