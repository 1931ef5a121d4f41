#!/usr/bin/env bash
# GPU check for a lent device (one H200): builds the runner in release and runs doctor, the
# CUDA checkpoint demo (first, as it has never run on hardware; each of its steps capped),
# calibrate and the validation suite, writing every table to $OUT (default ./gpu-check-out).
# Budget: 6 minutes.
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
  capped 100000 "$@"
}
capped() { # cap in seconds, name, command...
  local cap=$1 name=$2; shift 2
  local budget; budget=$(left)
  if [ "$budget" -gt "$cap" ]; then budget=$cap; fi
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
# The address-preserving checkpoint on the device: build, pause, release (device memory
# returned), restore at the same addresses, migrate to a new process; then a new process
# restores the kept image once more, and once with a page of its range taken (must refuse).
CK=$(mktemp -d)
capped 120 checkpoint-cuda "$B" checkpoint-demo --device cuda --image-dir "$CK" --trace "$OUT/checkpoint-cuda.trace.json"
capped 30 checkpoint-cuda-restore "$B" __checkpoint-restore --device cuda --image "$CK/active-dedup.img"
capped 30 checkpoint-cuda-taken "$B" __checkpoint-restore --device cuda --image "$CK/active-dedup.img" --occupy
rm -rf "$CK"
step calibrate-cuda "$B" calibrate --device cuda --output "$OUT/calibrated-cuda.json"
cuda_profile=()
[ -s "$OUT/calibrated-cuda.json" ] && cuda_profile=(--profile "$OUT/calibrated-cuda.json")
step validate-cuda "$B" validate --suite --device cuda ${cuda_profile[@]+"${cuda_profile[@]}"} --max-error 0.05 \
  --timings "$OUT/validate-cuda-timings.json"
step calibrate-cpu "$B" calibrate --device cpu --output "$OUT/calibrated-cpu.json"
step validate-cpu "$B" validate --suite --device cpu --profile "$OUT/calibrated-cpu.json" --max-error 0.05
capped 120 checkpoint-cpu "$B" checkpoint-demo --device cpu --size-mib 1024 --trace "$OUT/checkpoint-cpu.trace.json"
echo "tables in $OUT"
