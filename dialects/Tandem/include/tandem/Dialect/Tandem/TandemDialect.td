//===- TandemDialect.td - The tandem dialect ---------------*- tablegen -*-===//
//
// The dialect that models one step of distributed LLM training: compute ops,
// collectives on process groups and their asynchronous forms.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TD
#define TANDEM_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tandem_Dialect : Dialect {
  let name = "tandem";
  let cppNamespace = "::mlir::tandem";
  let summary = "Compute and communication of a distributed training step";
  let description = [{
    The `tandem` dialect models one step of distributed LLM training or
    inference as a dataflow graph on tensors, so that passes can rewrite it to
    overlap communication with computation.

    * Compute ops (`tandem.matmul`, `tandem.attention`, `tandem.norm`,
      `tandem.elementwise`, `tandem.opaque`, and their backward forms) are
      `Pure` value-semantics ops. They describe their work (FLOPs, bytes, GEMM
      shape) through `ComputeOpInterface`; the cost model turns that into time.
    * Collectives (`tandem.all_gather`, `tandem.reduce_scatter`,
      `tandem.all_reduce`, `tandem.all_to_all`, `tandem.permute`) run on a
      process group, a `tandem.group` symbol that carries the group's size and
      topology. Each has an asynchronous `_start` form that yields a
      `!tandem.future`, consumed by exactly one `tandem.wait`. Collectives are
      not `Pure`: they synchronise with other ranks, so they declare memory
      effects and generic transformations (CSE, DCE, sinking) leave them alone.
    * The target GPU is described by a `#tandem.target` attribute attached to
      the module as `tandem.target`; `tandem.calibration` on the module names
      the calibration file every pass that prices ops uses by default.
    * A schedule is recorded in discardable attributes the dialect declares:
      `tandem.stream`, `tandem.record_event` and `tandem.wait_events` on ops;
      `tandem.sm_target` on compute ops; `tandem.comm_sms` and `tandem.seq`
      on collectives; `tandem.copy_engine` on all-gathers and
      reduce-scatters that run on the copy engines instead of SMs; `tandem.num_streams` and `tandem.num_events` on
      functions. Streams are below 64 and events below 2^20; SM targets lie
      in [1, sm_count] and CTA budgets in [1, sm_count) of the module's
      target. Any other `tandem.*` attribute is an error.

    Every tensor in a function is the per-rank shard: shapes are those one GPU
    sees.
  }];
  // The schedule attributes the passes attach and the runtime lowering
  // reads. Declared here, once: the dialect's attribute verifier
  // (ScheduleAttributes.cpp) checks their placement, types and ranges, and
  // rejects any other `tandem.*` name. docs/passes/assign-streams.md gives
  // their meaning.
  let discardableAttrs = (ins
    "::mlir::IntegerAttr":$stream,
    "::mlir::IntegerAttr":$sm_target,
    "::mlir::IntegerAttr":$comm_sms,
    "::mlir::UnitAttr":$copy_engine,
    "::mlir::IntegerAttr":$record_event,
    "::mlir::DenseI64ArrayAttr":$wait_events,
    "::mlir::IntegerAttr":$seq,
    "::mlir::IntegerAttr":$num_streams,
    "::mlir::IntegerAttr":$num_events,
    "::mlir::StringAttr":$calibration,
    "::mlir::FloatAttr":$measured_scale,
    "::mlir::DenseI64ArrayAttr":$avoid_overlap
  );
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the module attribute that holds the target description.
    static constexpr ::llvm::StringLiteral getTargetAttrName() {
      return ::llvm::StringLiteral("tandem.target");
    }
  private:
    void registerAttributes();
    void registerTypes();
  public:
  }];
}

class Tandem_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tandem_Dialect, mnemonic, traits>;

#endif // TANDEM_DIALECT_TD
