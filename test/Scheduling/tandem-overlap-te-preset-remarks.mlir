// te-preset explains the collectives it leaves unsplit by the preset's
// rule, not by the cost model (whose candidates it still lists).
// REQUIRES: tandem-gen
// RUN: tandem-gen --model llama3-8b --layers 1 --tp 2 --seq 512 --print-locations | tandem-opt --tandem-overlap="strategy=te-preset remarks=true" -o /dev/null 2>&1 | FileCheck %s

// CHECK-DAG: loc("l0.qkv.grad_rs.mb0"): reduce-scatter left unsplit: TransformerEngine's preset pipelines only the reduce-scatters after proj/fc2 fprop; this one gets bulk overlap; predicted: unsplit
// CHECK-DAG: loc("l0.fc1.grad_rs.mb0"): reduce-scatter left unsplit: TransformerEngine's preset pipelines only the reduce-scatters after proj/fc2 fprop; this one gets bulk overlap; predicted: unsplit
// CHECK-NOT: no pipeline is predicted faster
