//===- TandemInterfaces.td - Op interfaces ------------------*- tablegen -*-===//
//
// What the cost model, the simulator and the passes ask of an op, so that
// they need no isa<> chains: compute ops describe their work, collectives
// their group, kind and payload.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_INTERFACES_TD
#define TANDEM_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Tandem_ComputeOpInterface : OpInterface<"ComputeOpInterface"> {
  let cppNamespace = "::mlir::tandem";
  let description = [{
    A compute op states how much work it does; the cost model turns that into
    time on a target. Counts are per rank (the shapes one GPU sees).
  }];
  let methods = [
    InterfaceMethod<"Kind of work: decides the cost formula.",
      "::mlir::tandem::ComputeKind", "getComputeKind">,
    InterfaceMethod<"Floating-point operations.", "double", "getFlops">,
    InterfaceMethod<"Bytes read from and written to HBM at least once.",
      "double", "getBytesAccessed">,
    InterfaceMethod<[{
        Element type whose tensor-core peak bounds the op (the operand
        type for GEMMs).
      }], "::mlir::Type", "getComputeElementType">,
    InterfaceMethod<[{
        For GEMM-like ops, the (batch, M, N, K) problem; std::nullopt
        otherwise.
      }], "std::optional<::mlir::tandem::GemmShape>", "getGemmShape",
      (ins), [{}], [{ return std::nullopt; }]>
  ];
}

def Tandem_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::tandem";
  let description = [{
    A collective on a process group, in its blocking or its `_start` form.
  }];
  let methods = [
    InterfaceMethod<"Kind of collective.", "::mlir::tandem::CollectiveKind",
      "getCollectiveKind">,
    InterfaceMethod<"The process group symbol.", "::mlir::FlatSymbolRefAttr",
      "getGroupAttr">,
    InterfaceMethod<"The tensor sent by this rank.", "::mlir::Value",
      "getInput">,
    InterfaceMethod<[{
        The tensor this rank receives (for a `_start` form, the type inside
        the future).
      }], "::mlir::RankedTensorType", "getResultTensorType">,
    InterfaceMethod<"Whether this is the `_start` form.", "bool", "isAsync">,
    InterfaceMethod<[{
        Bytes of the collective's full buffer, the size in the usual
        bus-bandwidth formulas: the gathered output for all-gather, the
        unreduced input for reduce-scatter, the buffer for all-reduce, and
        the buffer this rank sends for all-to-all and permute.
      }], "int64_t", "getPayloadBytes">
  ];
}

#endif // TANDEM_INTERFACES_TD
