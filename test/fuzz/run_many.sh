#!/bin/sh
# Runs the differential fuzzer over many graphs in chunks, so a long run can
# be watched (and stopped) chunk by chunk and each chunk's log stands alone.
#
#   test/fuzz/run_many.sh [FIRST_SEED [COUNT [CHUNK]]]
#
# Defaults: seeds 1000..10999 (10000 graphs) in chunks of 500, all modes,
# -j $(nproc). DNNC, DNNC_RUN, JOBS, MODES, OUT and EXTRA (more
# dnnc_fuzz.py flags, e.g. "--minimize-time 60") override the rest. Logs go
# to $OUT/chunk-SEED.log; failures to $OUT (seedN-MODE.*). The chunks'
# reports are added up (sum_reports.py: classes per mode, ops, refusals,
# FAIL lines) into $OUT/summary-FIRST_SEED.txt. The last line sums the
# chunks' `N passed, N failed`; the exit status is 1 iff any failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
first=${1:-1000}
count=${2:-10000}
chunk=${3:-500}
DNNC=${DNNC:-$root/build/bin/dnnc}
DNNC_RUN=${DNNC_RUN:-$root/build/bin/dnnc-run}
JOBS=${JOBS:-$(nproc)}
MODES=${MODES:-1rank,stress,pp,cuda-emu}
OUT=${OUT:-$root/fuzz-failures}
EXTRA=${EXTRA:-}
mkdir -p "$OUT"

passed=0
failed=0
logs=
seed=$first
end=$((first + count))
while [ "$seed" -lt "$end" ]; do
  n=$chunk
  [ $((seed + n)) -gt "$end" ] && n=$((end - seed))
  log="$OUT/chunk-$seed.log"
  logs="$logs $log"
  # shellcheck disable=SC2086  # EXTRA is a list of flags
  python3 "$here/dnnc_fuzz.py" --seed "$seed" --count "$n" --modes "$MODES" \
    -j "$JOBS" --dnnc "$DNNC" --dnnc-run "$DNNC_RUN" --out "$OUT" $EXTRA \
    >"$log"
  last=$(tail -n 1 "$log")
  echo "seeds $seed..$((seed + n - 1)): $last"
  p=$(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
  f=$(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
  if [ -z "$p" ]; then
    echo "error: chunk at seed $seed did not finish; see $log" >&2
    exit 2
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  seed=$((seed + n))
done
# shellcheck disable=SC2086  # logs is a list of paths without spaces
python3 "$here/sum_reports.py" $logs >"$OUT/summary-$first.txt"
echo "summary: $OUT/summary-$first.txt"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
