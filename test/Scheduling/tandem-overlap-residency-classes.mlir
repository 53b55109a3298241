// The SM residency relief on a generated step: giving every waiting
// collective's GEMMs a target at once makes the step slower (the forward
// all-gathers' waits do not pay), so the relief tries the waits class by
// class (the same wait repeated in every layer) and keeps the classes that
// shorten the step: the last chunk GEMMs of qkv dgrad, whose reduce-scatter
// chunks waited for SMs, proj fprop, and the fc2 wgrads that AG-WGRAD moved
// under all-gathers. The forward qkv all-gathers' class is left alone.
// REQUIRES: tandem-gen
// RUN: tandem-gen --model llama3-70b --layers 2 --tp 4 --seq 8192 --target h200 --topology full-mesh --print-locations | tandem-opt --tandem-overlap="strategy=pipeline+reschedule remarks=true" -o /dev/null 2>&1 | FileCheck %s
// RUN: tandem-gen --model llama3-70b --layers 2 --tp 4 --seq 8192 --target h200 --topology full-mesh --print-locations | tandem-opt --tandem-overlap="strategy=pipeline+reschedule remarks=true relieve-residency=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF

// CHECK-DAG: loc("l0.qkv.dgrad.mb0"): tandem.sm_target = 108: collectives issued while it held every SM waited 94.4 us for SMs (SM residency); step 39199.6 us -> 38981.4 us
// CHECK-DAG: loc("l1.qkv.dgrad.mb0"): tandem.sm_target = 108: collectives issued while it held every SM waited 94.4 us for SMs (SM residency)
// CHECK-DAG: loc("l0.proj.fprop.mb0"): tandem.sm_target = 108: collectives issued while it held every SM waited 49.4 us
// CHECK-DAG: loc("l1.proj.fprop.mb0"): tandem.sm_target = 108: collectives issued while it held every SM waited 49.4 us
// CHECK-DAG: loc("l0.fc2.wgrad.mb0"): tandem.sm_target = 108: collectives issued while it held every SM waited 1243.3 us
// CHECK-DAG: loc("l0.qkv.ag.mb0"): waits 5.2 us for SMs behind 1 GEMM(s) sized for all SMs (SM residency); left alone: SM targets there do not shorten the step

// OFF-NOT: SM residency
