#!/usr/bin/env bash
# Runs the transports' property tests (random loss, reordering and duplication between two
# endpoints) with fresh cases: a random seed, printed first, and PROPTEST_CASES per property
# (default 5000). A failure prints the shrunk case; rerun it with the printed seed:
#     ./scripts/soak.sh [cases] [seed]
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-5000}"
seed="${2:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}"
echo "PROPTEST_RNG_SEED=$seed PROPTEST_CASES=$cases"
PROPTEST_RNG_SEED="$seed" PROPTEST_CASES="$cases" cargo test --quiet -p tpsim-transport --lib pair_tests
