#!/usr/bin/env bash
# GPU check for a lent device (one H200): builds the runner in release and runs doctor,
# calibrate, the validation suite and (when the command exists) the checkpoint demo, writing
# every table to $OUT (default ./gpu-check-out). Budget: 6 minutes.
#
# The CUDA steps run the CUDA executor on device 0 (collectives emulated by copy-engine
# transfers); validate-cuda uses the profile calibrate-cuda wrote (or calibrates itself when that
# step failed) and writes every op's measured interval. Where CUDA cannot run, each CUDA step
# records its one-line refusal. The CPU executor's calibration and suite also run on the GPU
# machine, for comparison.
set -u
OUT="${OUT:-./gpu-check-out}"
mkdir -p "$OUT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
deadline=$((SECONDS + 360))
left() { echo $((deadline - SECONDS)); }
step() { # name, command...
  local name=$1; shift
  local budget; budget=$(left)
  if [ "$budget" -le 5 ]; then echo "skipped $name: out of time" | tee "$OUT/$name.txt"; return; fi
  echo "== $name ($budget s left)"
  timeout "$budget" "$@" >"$OUT/$name.txt" 2>&1
  echo "exit $?" >>"$OUT/$name.txt"
  tail -n 20 "$OUT/$name.txt"
}
{ date -u +%Y-%m-%dT%H:%MZ; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1; } >"$OUT/device.txt"
step build cargo build --release --locked -p bubblelab-runner
B="$CARGO_TARGET_DIR/release/bubblelab"
step doctor "$B" doctor
step calibrate-cuda "$B" calibrate --device cuda --output "$OUT/calibrated-cuda.json"
cuda_profile=()
[ -s "$OUT/calibrated-cuda.json" ] && cuda_profile=(--profile "$OUT/calibrated-cuda.json")
step validate-cuda "$B" validate --suite --device cuda ${cuda_profile[@]+"${cuda_profile[@]}"} --max-error 0.05 \
  --timings "$OUT/validate-cuda-timings.json"
step calibrate-cpu "$B" calibrate --device cpu --output "$OUT/calibrated-cpu.json"
step validate-cpu "$B" validate --suite --device cpu --profile "$OUT/calibrated-cpu.json" --max-error 0.05
if "$B" --help 2>/dev/null | grep -q checkpoint-demo; then
  step checkpoint-demo "$B" checkpoint-demo --device cuda
  step checkpoint-demo-cpu "$B" checkpoint-demo --device cpu --size-mib 1024 --trace "$OUT/checkpoint-cpu.trace.json"
else
  echo "checkpoint-demo: not in this build" >"$OUT/checkpoint-demo.txt"
fi
echo "tables in $OUT"
