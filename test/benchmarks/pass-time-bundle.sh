#!/bin/bash
# Bundles two tandem-opt builds, their shared libraries (libLLVM and what it
# needs, not glibc/libstdc++) and the 96-layer x 8-micro-batch step into one
# directory, to time the pass on a machine without MLIR (e.g. the GPU host):
#
#   test/benchmarks/pass-time-bundle.sh OLD/tandem-opt NEW/tandem-opt OUT
#   # copy OUT and this repository's test/benchmarks/pass-time.py there, then:
#   OUT/run.sh [pass-time.py options, e.g. --strategies reschedule,auto]
#
# lit never runs this file. Needs build/bin/tandem-gen (or TANDEM_GEN).
set -euo pipefail
[ $# -eq 3 ] || { sed -n 2,10p "$0"; exit 2; }
before=$1 after=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
gen=${TANDEM_GEN:-build/bin/tandem-gen}
mkdir -p "$out/lib"
cp "$before" "$out/opt-before"
cp "$after" "$out/opt-after"
for lib in $(ldd "$after" | awk '/=>/ {print $3}' |
  grep -v -E 'lib(c|m|stdc\+\+|gcc_s|pthread|dl|rt)\.so'); do
  cp -L "$lib" "$out/lib/"
done
"$gen" --model gpt3-175b --layers 96 --micro-batches 8 --tp 8 --seq 2048 \
  --target h200 --topology switch -o "$out/step.mlir"
cp "$here/pass-time.py" "$out/"
cat >"$out/run.sh" <<'RUN'
#!/bin/bash
set -euo pipefail
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib
echo "host: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
python3 pass-time.py --before ./opt-before --after ./opt-after \
  --step step.mlir "$@"
RUN
chmod +x "$out/run.sh"
du -sh "$out"
