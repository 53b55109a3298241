// te-preset+reschedule: TransformerEngine's per-layer choices, then
// AG-WGRAD moves wgrad GEMMs under later collectives, here under the P2P
// ring of a gradient all-gather. On this TP=2 full-mesh step `auto` picks
// it: TE's pipelining is the best there, and AG-WGRAD fills its windows.
// REQUIRES: tandem-gen
// RUN: tandem-gen --model llama3-70b --layers 2 --tp 2 --seq 2048 --topology full-mesh --print-locations -o %t.mlir
// RUN: tandem-opt %t.mlir --tandem-overlap="strategy=te-preset+reschedule remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TERS
// RUN: tandem-opt %t.mlir --tandem-overlap="strategy=te-preset remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TE
// RUN: tandem-opt %t.mlir --tandem-overlap=strategy=auto -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO

// TERS-DAG: loc("l1.proj.grad_ag.mb0"): all-gather -> matmul pipelined as 2 P2P ring steps
// TERS-DAG: loc("l1.fc2.wgrad.mb0"): wgrad moved into the window of 'l1.proj.grad_ag.mb0' (permute on @tp)
// TE-NOT: wgrad moved
// TE: loc("l1.proj.grad_ag.mb0"): all-gather -> matmul pipelined as 2 P2P ring steps
// TE-NOT: wgrad moved
// AUTO: strategy te-preset+reschedule chosen; predicted spans: none {{.*}} te-preset {{[0-9.]+}} us te-preset+reschedule {{[0-9.]+}} us
