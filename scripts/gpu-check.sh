#!/usr/bin/env bash
# GPU check for a lent device (one H100 or H200): doctor, the CUDA checkpoint demo (capped),
# calibrate and the validation suite on CUDA, then the CPU executor's calibration and suite on
# the same machine. Budget: $GPU_CHECK_BUDGET_S seconds (default 330), every step capped.
#
# The runner: $BUBBLELAB_BIN, else target/release/bubblelab carried with the working tree
# (the lent machines have CUDA but no Rust toolchain and no network: build it here with
# `cargo build --release --locked -p bubblelab-runner` and name it in the device call's carry;
# it needs glibc >= 2.34 there), else a release build when cargo is on the PATH. The script
# says which.
#
# Output: the device tool brings back at most 8 files, so every step's table, JSON and trace
# goes into one archive, $OUT/gpu-check.tar.gz, and $OUT/summary.txt holds the device, the
# runner and the last lines of each step. Where CUDA cannot run, each CUDA step records its
# one-line refusal and the script goes on.
set -u
OUT="${OUT:-./gpu-check-out}"
mkdir -p "$OUT"
W=$(mktemp -d)
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
deadline=$((SECONDS + ${GPU_CHECK_BUDGET_S:-330}))
left() { echo $((deadline - SECONDS)); }
say() { echo "$*" | tee -a "$SUMMARY"; }
capped() { # cap in seconds, name, command...
  local cap=$1 name=$2; shift 2
  local budget; budget=$(left)
  if [ "$budget" -gt "$cap" ]; then budget=$cap; fi
  if [ "$budget" -le 5 ]; then say "skipped $name: out of time"; return; fi
  say "== $name (cap $budget s)"
  local start=$SECONDS
  timeout "$budget" "$@" >"$W/$name.txt" 2>&1
  local rc=$?
  echo "exit $rc after $((SECONDS - start)) s" >>"$W/$name.txt"
  tail -n 24 "$W/$name.txt" | tee -a "$SUMMARY"
}

{ date -u +%Y-%m-%dT%H:%MZ; uname -m; ldd --version 2>&1 | head -n 1;
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1; } | tee -a "$SUMMARY"

B="${BUBBLELAB_BIN:-target/release/bubblelab}"
if [ -x "$B" ]; then
  say "runner: $B as carried (modified $(date -u -r "$B" +%Y-%m-%dT%H:%MZ)); no build"
elif command -v cargo >/dev/null 2>&1; then
  capped 240 build cargo build --release --locked -p bubblelab-runner
else
  say "runner: none at $B and no cargo on the PATH; carry target/release/bubblelab (see docs/GPU.md)"
fi
if [ ! -x "$B" ]; then
  say "no runner: nothing run"
  tar -czf "$OUT/gpu-check.tar.gz" -C "$W" . && rm -rf "$W"
  exit 1
fi
"$B" --version 2>&1 | tee -a "$SUMMARY"

capped 30 doctor "$B" doctor
# The address-preserving checkpoint on the device: build, pause, release (device memory
# returned), restore at the same addresses, migrate to a new process; then a new process
# restores the kept image once more, and once with a page of its range taken (must refuse).
CK=$(mktemp -d)
capped 90 checkpoint-cuda "$B" checkpoint-demo --device cuda --image-dir "$CK" --trace "$W/checkpoint-cuda.trace.json"
capped 20 checkpoint-cuda-restore "$B" __checkpoint-restore --device cuda --image "$CK/active-dedup.img"
capped 20 checkpoint-cuda-taken "$B" __checkpoint-restore --device cuda --image "$CK/active-dedup.img" --occupy
rm -rf "$CK"
capped 90 calibrate-cuda "$B" calibrate --device cuda --output "$W/calibrated-cuda.json"
cuda_profile=()
[ -s "$W/calibrated-cuda.json" ] && cuda_profile=(--profile "$W/calibrated-cuda.json")
capped 90 validate-cuda "$B" validate --suite --device cuda ${cuda_profile[@]+"${cuda_profile[@]}"} \
  --max-error 0.10 --timings "$W/validate-cuda-timings.json"
capped 30 calibrate-cpu "$B" calibrate --device cpu --output "$W/calibrated-cpu.json"
cpu_profile=()
[ -s "$W/calibrated-cpu.json" ] && cpu_profile=(--profile "$W/calibrated-cpu.json")
capped 60 validate-cpu "$B" validate --suite --device cpu ${cpu_profile[@]+"${cpu_profile[@]}"} --max-error 0.10 --repetitions 3
capped 40 checkpoint-cpu "$B" checkpoint-demo --device cpu --size-mib 256 --trace "$W/checkpoint-cpu.trace.json"
tar -czf "$OUT/gpu-check.tar.gz" -C "$W" . && rm -rf "$W"
say "done in $SECONDS s; every step's files in $OUT/gpu-check.tar.gz"
