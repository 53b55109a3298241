//===- Passes.td - Tandem passes ----------------------------*- tablegen -*-===//

#ifndef TANDEM_TRANSFORMS_PASSES_TD
#define TANDEM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// The options of every pass that prices ops: one cost model per module
// (tandem/Analysis/Target.h), so that the passes that decide and the passes
// that evaluate price alike.
defvar TargetOptions = [
  Option<"targetPreset", "target", "std::string", "\"\"",
         "Use this target preset instead of the module's tandem.target">,
  Option<"calibrationPath", "calibration", "std::string", "\"\"",
         "Calibration file (contention table and measured GPU parameters); "
         "default: the file the module's tandem.calibration names">
];

def TandemSimulate : Pass<"tandem-simulate", "::mlir::ModuleOp"> {
  let summary = "Simulate each function's schedule on the target and report";
  let description = [{
    Runs the discrete-event schedule simulator on every function with a body
    and reports, per function: the span, total compute and communication
    time (each op alone), the bound max(compute, communication), the critical
    path, exposed communication (time the compute stream waits on
    communication), the overlap efficiency (share of communication hidden)
    and peak memory.

    Contract:
    * The module carries `tandem.target` or the `target` option names a
      preset; an unknown preset, a missing target or a bad calibration file is
      an error.
    * Every op in a simulated function is a tandem compute op, a collective, a
      wait or `func.return`; anything else is an error at that op (no op is
      silently treated as free). Functions have a single block.
    * The IR is not changed.

    Streams, SM targets and CTA budgets are read from `tandem.stream`,
    `tandem.sm_target` and `tandem.comm_sms` where present (see
    docs/simulator.md for the defaults).

    With `diagnosis`, the measured durations of a `tandem-diagnose --json`
    report replace the model's for the ops it names, as `tandem-overlap`
    takes them (docs/diagnosis.md, "Prevention"); the IR is still not
    changed (a copy is simulated).
  }];
  let options = !listconcat([
    Option<"diagnosisPath", "diagnosis", "std::string", "\"\"",
           "tandem-diagnose --json report whose measured durations the "
           "simulation uses">,
    Option<"diagnosisPlanPath", "diagnosis-plan", "std::string", "\"\"",
           "The plan the diagnosed run executed: resolve the report's ops "
           "by its steps' source locations">,
    Option<"reportPath", "report", "std::string", "\"\"",
           "Write the JSON report to this file ('-' for stdout)">,
    Option<"tracePath", "trace", "std::string", "\"\"",
           "Write a Chrome trace-event JSON (Perfetto) to this file">,
    Option<"summary", "summary", "bool", "false",
           "Print a human-readable summary to stderr">
  ], TargetOptions);
  let statistics = [
    Statistic<"numFunctions", "functions", "Functions simulated">,
    Statistic<"numOpsSimulated", "ops", "Ops simulated">
  ];
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

def TandemTestCostModel : Pass<"tandem-test-cost-model", "::mlir::ModuleOp"> {
  let summary = "Test pass: report the cost model's estimate for every op";
  let description = [{
    Emits a remark on every compute op and collective with the cost model's
    uncontended estimate (time, waves and SMs for GEMMs; algorithm, steps and
    bandwidth for collectives). For testing the cost model through FileCheck
    and -verify-diagnostics.
  }];
  let options = !listconcat([
    Option<"smCount", "sms", "int64_t", "0",
           "SMs to give every compute op (0 = all)">,
    Option<"ctas", "ctas", "int64_t", "0",
           "CTA budget of every collective (0 = the target's default)">
  ], TargetOptions);
}

def TandemTestLiveness : Pass<"tandem-test-liveness", "::mlir::ModuleOp"> {
  let summary = "Test pass: report peak memory and the critical path";
  let description = [{
    Emits a remark on every function with its program-order peak memory (and
    the op where it is reached) and a remark with the critical path length
    under the cost model.
  }];
}

//===----------------------------------------------------------------------===//
// Overlap passes
//===----------------------------------------------------------------------===//

def TandemAsyncCollectives
    : Pass<"tandem-async-collectives", "::mlir::ModuleOp"> {
  let summary = "Turn blocking collectives into start/wait pairs";
  let description = [{
    Replaces every blocking collective with its `_start` form followed at
    once by a `tandem.wait`, so that later passes can move compute between
    the two. Stamps every collective with `tandem.seq`, its index in its
    group's issue order, which tandem-verify-schedule checks later.

    Contract: the schedule and every value are unchanged (the wait follows
    its start immediately); collectives that are already asynchronous are
    only stamped.
  }];
  let statistics = [
    Statistic<"numConverted", "converted", "Blocking collectives converted">
  ];
}

def TandemBulkOverlap : Pass<"tandem-bulk-overlap", "::mlir::ModuleOp"> {
  let summary = "Issue collectives early and wait late around independent compute";
  let description = [{
    For every `_start` collective, moves the start up to just after the last
    op it depends on and its wait down to just before the first op that uses
    the result, so that independent compute (e.g. the wgrad of a
    column-parallel layer under the preceding reduce-scatter) runs under the
    collective on another stream.

    Limits: a start never passes a collective of the same group (every rank
    issues a group's collectives in one order); with `max-in-flight` > 0, at
    most that many collectives of one group are in flight at any point (the
    default, 0, sets no limit: a collective in flight holds only its
    buffers, which the memory budget bounds, and a group's collectives run
    one after another on its stream however many are in flight); with
    `memory-budget`, a move that would raise the program-order peak memory
    above the budget is undone (if the input already exceeds the budget, no
    move may raise the peak). Emits a remark per collective saying how far
    its start and wait moved, or why they stayed.
  }];
  let options = !listconcat([
    Option<"maxInFlight", "max-in-flight", "int64_t", "0",
           "Collectives of one group in flight at once (0 = no limit)">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Peak-memory limit in bytes (0 = none)">
  ], TargetOptions);
  let statistics = [
    Statistic<"numHoisted", "hoisted", "Starts moved earlier">,
    Statistic<"numSunk", "sunk", "Waits moved later">,
    Statistic<"numBudgetBlocked", "budget-blocked",
              "Moves undone for the memory budget">
  ];
}

def TandemRescheduleWgrad
    : Pass<"tandem-reschedule-wgrad", "::mlir::ModuleOp"> {
  let summary = "Delay wgrad GEMMs into later collectives' windows (AG-WGRAD)";
  let description = [{
    Finds `wgrad` matmuls whose results reach nothing but function results,
    gradient accumulation (`tandem.elementwise add`) and gradient
    collectives, and moves each, with its accumulation chain, into the
    window (between `_start` and wait) of a later collective - all-gathers
    first, then other collectives - choosing windows with the cost model so
    that each window's compute fills, but does not exceed, its
    communication time under contention. Collectives are never split or
    replaced.

    Then, with `split-wgrads` (the default), windows that still have room
    (their collective would be partly exposed) are filled from wgrads whose
    own window stays covered without half of them: the nearest such wgrad
    before the window is split along its output rows into two GEMMs (each
    reads half of `op(lhs)`'s rows, a copy when `lhs` is transposed; the
    halves are reassembled along dimension 0, which they write in place),
    and one half moves into the window with its accumulation chain. A split
    is made only when the exposed time it hides exceeds what it adds (the
    copies, one more launch, wave quantisation of the halves), with a remark
    either way.

    `memory-budget` is a hard limit: peak memory (program-order liveness)
    after the pass never exceeds it; if the input already exceeds it, the
    pass makes it no worse and says so. Every wgrad gets a remark: where it
    moved and the window's fill, or why it stayed (no later window, window
    full, budget, dependences).

    Expects async collectives with their windows opened (run
    tandem-async-collectives and tandem-bulk-overlap first).
  }];
  let options = !listconcat([
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Peak-memory limit in bytes (0 = none)">,
    Option<"fillLimit", "fill-limit", "double", "1.0",
           "Fill windows up to this fraction of their collective's time">,
    Option<"splitWgrads", "split-wgrads", "bool", "true",
           "Split a wgrad its window does not wholly need to fill a later "
           "window's remaining room">
  ], TargetOptions);
  let statistics = [
    Statistic<"numMoved", "moved", "wgrad GEMMs moved into a window">,
    Statistic<"numKept", "kept", "wgrad GEMMs left in place">,
    Statistic<"numSplit", "split", "wgrad GEMMs split to fill a window">
  ];
}

def TandemPipelineCollectiveMatmul
    : Pass<"tandem-pipeline-collective-matmul", "::mlir::ModuleOp"> {
  let summary = "Split AG->matmul and matmul->RS into chunk pipelines";
  let description = [{
    For each blocking all-gather along dimension 0 whose result is the row
    operand of a matmul, and each matmul whose result only feeds a
    reduce-scatter along dimension 0, predicts with the cost model the time
    of: the pair unsplit; N-chunk pipelines of chunked native collectives
    (N in 2, 4, 8 dividing the rows per rank, or `chunks`); and, for
    all-gathers, a ring of P2P steps (`tandem.permute`, one per rank). It
    applies the fastest. On a full-mesh group a P2P step uses only the links
    to one peer, so P2P is refused there unless `method=p2p` forces it; the
    remark gives the predicted times of every candidate either way.

    The pipelined form computes the same values: chunks are taken with
    `tandem.slice` and the chunk results assembled with `tandem.concat`
    (interleaved by rank where the row order needs it) or
    `tandem.ring_concat`. Along dimension 0 these move no bytes. Run before
    tandem-async-collectives: the chunk collectives are blocking and become
    start/wait pairs there. P2P reduce-scatter pipelines are not
    implemented (remark); such pairs stay chunked native or unsplit.
  }];
  let options = !listconcat([
    Option<"method", "method", "std::string", "\"auto\"",
           "auto|unsplit|chunked|p2p">,
    Option<"chunks", "chunks", "int64_t", "0",
           "Chunk count for chunked pipelines (0 = choose among 2, 4, 8)">,
    Option<"copyEngines", "copy-engines", "bool", "false",
           "Also consider pipelines whose chunked collectives or ring steps "
           "run on the copy engines (tandem.copy_engine)">
  ], TargetOptions);
  let statistics = [
    Statistic<"numAllGathers", "all-gathers", "AG->matmul pairs pipelined">,
    Statistic<"numReduceScatters", "reduce-scatters",
              "matmul->RS pairs pipelined">,
    Statistic<"numKept", "kept", "Collectives left unsplit">
  ];
}

def TandemSplitBatch : Pass<"tandem-split-batch", "::mlir::ModuleOp"> {
  let summary = "Split each step into independent parts (batch splitting)";
  let description = [{
    Runs every row-local op (element-wise ops, norms, a matmul's row
    operand, all-gathers and reduce-scatters along dimension 0,
    all-reduces) as `parts` parts, each on 1/parts of the rows, so that one
    part's native collective can run under another part's compute. Ops that
    are not row-local (attention, opaque kernels) read their operands
    assembled (`tandem.concat`) and their row users take `tandem.slice`s
    again; a wgrad GEMM reads every part's rows at once (the same row
    permutation of both operands, in-place concats); the parts of a norm's
    weight gradient are added up. A list scheduler over the cost model then
    orders the parts. With `parts=0` (default) the part count is chosen
    among 2, 4 and 8 by simulating each candidate (and the unsplit input)
    after tandem-async-collectives and tandem-bulk-overlap; for 2 and 4
    parts, uneven parts whose GEMMs fill whole waves on the SMs a
    collective leaves free (whole sequences or causal segments of the
    layout) are a candidate too where they beat equal parts. `weights`
    forces uneven parts. A remark gives every candidate's predicted span. A candidate over `memory-budget` is
    never chosen. Run before tandem-async-collectives: the function must
    have only blocking collectives and no schedule attributes (otherwise a
    remark says why it was left alone). The result computes the same values;
    tandem-verify-schedule proves it (docs/passes/split-batch.md).
  }];
  let options = !listconcat([
    Option<"parts", "parts", "int64_t", "0",
           "Parts (0 = choose among 2, 4, 8 by simulation; 1 = no split)">,
    ListOption<"weights", "weights", "int64_t",
               "Uneven parts: part p holds weights[p] of their sum of the "
               "rows (overrides parts; each in [1, 1024], at most 1024)">,
    Option<"waveAwareParts", "wave-aware-parts", "bool", "true",
           "With parts=0, also try uneven parts (whole units of the "
           "layout) whose GEMMs fill the waves better than equal parts">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Peak-memory limit in bytes (0 = none)">,
    Option<"maxInFlight", "max-in-flight", "int64_t", "0",
           "Bulk overlap's in-flight limit when judging a candidate "
           "(0 = no limit)">
  ], TargetOptions);
  let statistics = [
    Statistic<"numSplit", "split-functions", "Functions split">
  ];
}

def TandemCopyEngines : Pass<"tandem-copy-engines", "::mlir::ModuleOp"> {
  let summary = "Run all-gathers and reduce-scatters on the copy engines "
                "where that pays";
  let description = [{
    Low-contention collectives: marks all-gathers and reduce-scatters
    (blocking or `_start`) with `tandem.copy_engine`, so that they run as
    peer-to-peer copies on the copy engines (plus a small reduction kernel
    for a reduce-scatter) and hold no SMs. The collectives are grouped into
    classes (kind, payload, group); with `mode=cost` (default) each class,
    largest first, is moved when the simulated step gets shorter with it
    moved; `mode=all` moves every eligible class. Collectives on a ring or
    hierarchical group cannot use the copy engines (a remark says why); a
    class whose reduce-scatter staging would break `memory-budget` stays on
    SMs. A moved collective loses its `tandem.comm_sms`. Remarks give every
    class's decision and predicted spans (docs/passes/copy-engines.md).
  }];
  let options = !listconcat([
    Option<"mode", "mode", "std::string", "\"cost\"",
           "cost (move a class where the step gets shorter) | all">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Peak-memory limit in bytes (0 = none)">
  ], TargetOptions);
  let statistics = [
    Statistic<"numMoved", "moved-collectives",
              "Collectives moved to the copy engines">
  ];
}

def TandemOverlap : Pass<"tandem-overlap", "::mlir::ModuleOp"> {
  let summary = "Overlap communication with computation (named pipeline)";
  let description = [{
    Runs the overlap phases on every function, as chosen by `strategy`:

    * `none`: the input as it is (the serial baseline);
    * `bulk`: tandem-async-collectives, then tandem-bulk-overlap;
    * `reschedule`: `bulk`, then tandem-reschedule-wgrad (AG-WGRAD);
    * `pipeline`: tandem-pipeline-collective-matmul (method and chunk count
      chosen by the cost model and the topology), then `bulk`;
    * `pipeline+reschedule`: `pipeline`, then tandem-reschedule-wgrad;
    * `te-preset`: TransformerEngine's documented default per-layer choices
      as the peer baseline - ring-exchange (P2P) all-gather for qkv/fc1
      fprop and proj/fc2 dgrad, a 4-chunk pipelined reduce-scatter after
      proj/fc2 fprop, bulk overlap for the rest (qkv/fc1 dgrad and wgrad
      under their collectives); layers are found by their `layer` tags;
    * `te-preset+reschedule`: `te-preset`, then tandem-reschedule-wgrad
      (TransformerEngine's choices plus Tandem's AG-WGRAD);
    * `split`: tandem-split-batch (part count chosen by the cost model),
      then `bulk`;
    * `split+reschedule`: `split`, then tandem-reschedule-wgrad;
    * `auto`: simulates every other strategy (te-preset included) on copies
      of each function and keeps the one with the shortest predicted span,
      so the result is never predicted slower than the input nor than the
      TransformerEngine preset; a remark lists the predicted span of every
      candidate. Inside the chosen strategy, each collective, pipeline and
      wgrad is decided by the cost model and the topology.

    After the strategy, every function gets CTA budgets for its collectives
    and, with `relieve-residency` (default), the SM residency relief
    (tandem-assign-sm-targets; `auto` relieves its two fastest candidates
    before choosing), streams and events (tandem-assign-streams),
    and, with `verify` (default), is proven against a copy of its input
    (tandem-verify-schedule with that copy as reference, and with
    allow-reordered-collectives for the split strategies, whose list
    scheduler may reorder collectives); a failure there is an error.

    `memory-budget` is passed to every phase as a hard limit on the
    program-order peak memory. With `remarks`, every phase explains each
    decision; without, only the strategy choice of `auto` is reported.

    With `diagnosis` (a `tandem-diagnose --json` report of a measured run of
    a plan of this module), the function it measured gets its facts first:
    the two ops of every harmful overlap are kept apart by every strategy,
    and the ops of every lost expected overlap are priced at their measured
    durations (docs/diagnosis.md, "Prevention"). With `diagnosis-plan` (the
    plan that run executed), the report's ops are found by the source
    locations of their plan steps, so the input may be the unscheduled
    function the plan was made from; without it, by name and occurrence. An
    unreadable or malformed report or plan, a function the module does not
    define and an op the function does not have are errors.
  }];
  let options = !listconcat([
    Option<"strategy", "strategy", "std::string", "\"auto\"",
           "auto|none|bulk|reschedule|pipeline|pipeline+reschedule|te-preset|"
           "te-preset+reschedule|split|split+reschedule">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Peak-memory limit in bytes (0 = none)">,
    Option<"maxInFlight", "max-in-flight", "int64_t", "0",
           "Collectives of one group in flight at once (0 = no limit)">,
    Option<"remarks", "remarks", "bool", "false",
           "Explain every decision of every phase as a remark">,
    Option<"relieveResidency", "relieve-residency", "bool", "true",
           "SM targets for GEMMs that keep collectives waiting for SMs, "
           "where the simulated step gets shorter">,
    Option<"verify", "verify", "bool", "true",
           "Prove the result against a copy of the input "
           "(tandem-verify-schedule with a reference)">,
    Option<"copyEngines", "copy-engines", "bool", "false",
           "Let every strategy but none move all-gathers and "
           "reduce-scatters to the copy engines where the simulated step "
           "gets shorter (tandem-copy-engines)">,
    Option<"waveAwareParts", "wave-aware-parts", "bool", "true",
           "Let the split strategies try uneven parts sized to fill GEMM "
           "waves (tandem-split-batch wave-aware-parts)">,
    Option<"diagnosisPath", "diagnosis", "std::string", "\"\"",
           "tandem-diagnose --json report of a measured run: keep its "
           "harmful overlaps apart, take its measured durations">,
    Option<"diagnosisPlanPath", "diagnosis-plan", "std::string", "\"\"",
           "The plan the diagnosed run executed: resolve the report's ops "
           "by its steps' source locations">
  ], TargetOptions);
  let statistics = [
    Statistic<"numFunctions", "functions", "Functions scheduled">
  ];
}

def TandemAssignStreams : Pass<"tandem-assign-streams", "::mlir::ModuleOp"> {
  let summary = "Place every op on a stream and order cross-stream uses with events";
  let description = [{
    Materialises the streams of every function as attributes that the
    simulator and a runtime read: `tandem.stream` on every op (compute ops,
    blocking collectives and waits on stream 0; each group's `_start`
    collectives on the group's communication stream, numbered from 1 in
    order of first appearance; an existing `tandem.stream` is kept), and
    `tandem.num_streams` / `tandem.num_events` on the function. The streams
    are exactly those tandem-simulate uses.

    Cross-stream events: when an op needs an earlier op of another stream
    to have completed (it uses its result, or it is the next collective of
    the same group), the earlier op gets `tandem.record_event = <id> : i64`
    and the later one lists the id in `tandem.wait_events = array<i64: ...>`,
    unless stream order and earlier waits already order them. A wait
    consuming a `_start`'s future on another stream waits for the start's
    event. Existing event attributes are replaced.

    Remarks: per function, its streams and number of events; per blocking
    collective left on the compute stream, a hint to run
    tandem-async-collectives. Fails on functions with several blocks, ops
    that are not tandem compute ops, collectives or waits, and a
    `tandem.stream` that is not a non-negative integer.
  }];
  let statistics = [
    Statistic<"numFunctions", "functions", "Functions assigned streams">,
    Statistic<"numEvents", "events", "Cross-stream events created">
  ];
}

def TandemVerifySchedule
    : Pass<"tandem-verify-schedule", "::mlir::ModuleOp"> {
  let summary = "Prove a scheduled function race-free and equal to its input";
  let description = [{
    Checks every function with a body and fails with an error, located at
    the op at fault with notes at the other ops involved, when:
    * (a) a value is used on a stream other than its producer's without
      being ordered after it by events (`tandem.wait_events` on the user or
      an earlier op of its stream, transitively), stream order, or the
      `tandem.wait` of its collective; without any stream attribute the
      function is checked on the simulator's default streams with every use
      ordered after its producer, as tandem-simulate assumes;
    * (b) event attributes are malformed, an event is recorded twice or
      waited for before any op records it, or a `_start` is not completed
      by a later wait in its block;
    * (c) the collectives of a group do not keep their issue order:
      `tandem.seq` does not strictly increase in program order, or two
      consecutive collectives of the group run on different streams without
      being ordered;
    * (d) with `reference`, the function differs from the function of the
      same name in that module: signature, returned values (structural
      hashes that ignore `tandem.*` attributes, treat a blocking collective
      as its `_start` form and a wait's result as its start's), the number
      of compute ops of each kind, or each group's sequence of collectives.

    Remarks: collectives without `tandem.seq` when there is no reference, and
    a summary for every function that passes. The IR is not changed. See
    docs/passes/verify-schedule.md.
  }];
  let options = [
    Option<"referencePath", "reference", "std::string", "\"\"",
           "The unscheduled module (.mlir) to compare every function with">,
    Option<"remarks", "remarks", "bool", "true",
           "Emit remarks (what could not be checked, per-function summary)">,
    Option<"allowReorderedCollectives", "allow-reordered-collectives",
           "bool", "false",
           "Compare each group's collectives with the reference's in any "
           "order (schedules that reorder them on purpose, e.g. a batch "
           "split interleaving micro-batches)">
  ];
  let statistics = [
    Statistic<"numVerified", "functions", "Functions verified">
  ];
}

def TandemAssignSmTargets
    : Pass<"tandem-assign-sm-targets", "::mlir::ModuleOp"> {
  let summary = "Choose each collective's CTA budget and its GEMMs' SM targets";
  let description = [{
    For every `_start` collective whose wait is in the same block, the
    compute ops between the two in program order run beside it (its
    window). For each window with compute, chooses jointly the collective's
    CTA budget k (from `comm-sms`) and, for each GEMM in the window, an
    SM-count target: all SMs, or the `sm_count - k` SMs the collective
    leaves. The choice is the one the cost model predicts fastest for the
    window, run as the simulator runs it: the collective and the compute
    start together, each slowed by the contention table at k while both
    run, then the survivor runs alone (docs/passes/assign-sm-targets.md
    gives the formulas). Ties go to the target's `collective_sms` and to all
    SMs.

    Contract:
    * The module carries `tandem.target`; a missing target, a bad
      calibration file or a bad `comm-sms` list (empty, a value outside
      [1, sm_count), a value twice) is an error.
    * A decided window's start gets `tandem.comm_sms = k`; a GEMM in it gets
      `tandem.sm_target = sm_count - k` where that target is predicted
      faster, and loses any `tandem.sm_target` otherwise.
    * A window without compute, or with another collective in flight during
      it, is left alone, with a remark saying which. No op moves; nothing
      outside decided windows changes; the pass is idempotent.
    * A compute op in a window that the cost model cannot price is an error.
    * SM residency relief (`relieve-residency`, on by default; nothing to do
      when the cost model's `gemms_hold_sms` is off): after the windows, the
      function is simulated. Every GEMM sized for all SMs that kept a
      collective waiting for SMs (the collective was issued while the GEMM
      held every SM) gets `tandem.sm_target = sm_count - k`, k the
      collective's CTA budget. The targets are kept only if the simulated
      span gets shorter; otherwise the IR is restored. A function the
      simulator cannot run is an error.

    Remarks: one per window at its start (the chosen budget, the predicted
    window time and the time with the defaults), one per GEMM of a decided
    window (its waves on all SMs and on the SMs left, and the window time
    with either size). From the relief: one per retargeted GEMM (the wait
    it caused and the step before and after), or, when the targets were not
    kept, one per waiting collective saying so.
  }];
  let options = !listconcat([
    ListOption<"commSms", "comm-sms", "int64_t",
               "CTA budgets to try for each collective (default 8,16,24,32)">,
    Option<"relieveResidency", "relieve-residency", "bool", "true",
           "Give SM targets to GEMMs that keep collectives waiting for SMs "
           "when that shortens the simulated step">
  ], TargetOptions);
  let statistics = [
    Statistic<"numWindows", "windows", "Windows decided">,
    Statistic<"numRetargeted", "retargeted", "GEMMs given an SM target">,
    Statistic<"numRelieved", "relieved",
              "GEMMs given an SM target by the SM residency relief">
  ];
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

def TandemExportPlan : Pass<"tandem-export-plan", "::mlir::ModuleOp"> {
  let summary = "Lower a scheduled function to a runtime execution plan file";
  let description = [{
    Converts one function into the runtime's plan (docs/runtime.md) and
    writes it as JSON to `file`; `tandem-run` executes it.

    Contract:
    * The module has exactly one function with a body, or `function` names
      one; otherwise an error.
    * Streams and events are the function's own (`tandem.stream`,
      `tandem.record_event`, `tandem.wait_events`, as `tandem-assign-streams`
      writes them). A function without any of them gets the defaults of
      `tandem-assign-streams` without being changed, so that an unscheduled
      function lowers to its serial reference: one stream, every collective
      blocking.
    * Every value becomes a buffer: function arguments are plan inputs, a
      `tandem.slice` along dimension 0 without interleave is a view (no
      step), a `tandem.wait`'s result is its `_start`'s buffer and the wait a
      synchronisation-only step. The static memory plan places every other
      buffer in one arena, sharing bytes only between buffers whose accesses
      the schedule orders (happens-before over streams and events).
    * What the runtime cannot execute is an error at the op: element types
      other than bf16, f16 and f32, dynamic or rank-0 tensors, collectives
      along a dimension other than 0, all_to_all with split or concat other
      than 0, ops other than tandem compute ops, collectives and waits.
    * With `simulate` (default), the simulator's prediction for every step
      and for the whole function is stored in the plan, computed on the
      module's target (or `target`) and `calibration` file.
    * The IR is not changed. A remark on the function summarises the plan:
      steps, streams, events, buffers and arena size against the sum of all
      temporaries.
  }];
  let options = !listconcat([
    Option<"file", "file", "std::string", "\"\"",
           "Path of the plan file to write (required)">,
    Option<"functionName", "function", "std::string", "\"\"",
           "Function to lower (default: the only one with a body)">,
    Option<"simulate", "simulate", "bool", "true",
           "Store the simulator's prediction in the plan">
  ], TargetOptions);
  let statistics = [
    Statistic<"numSteps", "steps", "Steps in the exported plan">,
    Statistic<"arenaBytes", "arena-bytes", "Bytes of the plan's arena">
  ];
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

#endif // TANDEM_TRANSFORMS_PASSES_TD
