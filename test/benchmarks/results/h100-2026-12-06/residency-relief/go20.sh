#!/bin/bash
# Does the SM-residency relief (cuBLASLt SM-count targets on GEMMs) cost
# what the model says? Split plans with and without it, and none.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
mkdir -p $OUT/r
STEPS=build BUILD_TARGETS=tandem-run RESULTS=$OUT/r bash test/benchmarks/cudnn-batch.sh 2>&1 | tail -1
for r in 1 2; do
for f in devrun/rr/g4.split devrun/rr/g4.split-norelief devrun/rr/g4.none devrun/rr/g2.split devrun/rr/g2.split-norelief devrun/rr/g2.none; do
  build-cudnn/bin/tandem-run $f.json --emulate-fabric --attention cudnn --warmup 3 --iters 15 > $OUT/r/$(basename $f).$r.txt 2>&1
  echo "round $r $(basename $f): $(grep -E 'step time' $OUT/r/$(basename $f).$r.txt | awk '{print $(NF-1)}') ms; $(grep -E 'predicted span' $OUT/r/$(basename $f).$r.txt | sed 's/ *predicted span *//')"
  grep -E "^    gemm " $OUT/r/$(basename $f).$r.txt
done
done
