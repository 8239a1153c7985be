#!/usr/bin/env bash
# Set up every GKE cluster of fleet rl-fleet in project rl-dev-project, one after the other: each runs its own
# clusters/<name>/scripts/setup.sh, whose every step is safe to run again, so a failed run is resumed by rerunning.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: setup.sh [--dry-run]

Run scripts/setup.sh of dev-gke (project rl-dev-project) in this order, passing --dry-run on.

Options:
  -n, --dry-run  print the commands without running any of them
  -h, --help     show this help
USAGE
}

ARGS=()
while (($#)); do
  case "$1" in
    -n | --dry-run) ARGS+=(--dry-run) ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      printf 'error: unknown argument %s (see --help)\n' "$1" >&2
      exit 2
      ;;
  esac
  shift
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
for cluster in dev-gke; do
  printf '# == cluster %s\n' "$cluster"
  "$ROOT/clusters/$cluster/scripts/setup.sh" "${ARGS[@]}"
done
