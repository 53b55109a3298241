//===- TandemAttributes.td - Enums and attributes ----------*- tablegen -*-===//
//
// Enumerations (matmul role, topology, norm and element-wise kinds, reduction)
// and the target description attribute.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ATTRIBUTES_TD
#define TANDEM_ATTRIBUTES_TD

include "tandem/Dialect/Tandem/TandemDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

def Tandem_MatmulRole : I32EnumAttr<"MatmulRole",
    "role of a GEMM in the training step", [
      I32EnumAttrCase<"fprop", 0>,
      I32EnumAttrCase<"dgrad", 1>,
      I32EnumAttrCase<"wgrad", 2>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tandem";
}
def Tandem_MatmulRoleAttr
    : EnumAttr<Tandem_Dialect, Tandem_MatmulRole, "role">;

def Tandem_Topology : I32EnumAttr<"Topology",
    "how the GPUs of a process group are linked", [
      I32EnumAttrCase<"switch_", 0, "switch">,
      I32EnumAttrCase<"full_mesh", 1>,
      I32EnumAttrCase<"ring", 2>,
      I32EnumAttrCase<"hierarchical", 3>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tandem";
}
def Tandem_TopologyAttr
    : EnumAttr<Tandem_Dialect, Tandem_Topology, "topology">;

def Tandem_NormKind : I32EnumAttr<"NormKind", "normalisation", [
      I32EnumAttrCase<"layer", 0>,
      I32EnumAttrCase<"rms", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tandem";
}
def Tandem_NormKindAttr : EnumAttr<Tandem_Dialect, Tandem_NormKind, "norm">;

def Tandem_ElementwiseKind : I32EnumAttr<"ElementwiseKind",
    "element-wise computation", [
      I32EnumAttrCase<"add", 0>,
      I32EnumAttrCase<"mul", 1>,
      I32EnumAttrCase<"copy", 2>,
      I32EnumAttrCase<"cast", 3>,
      I32EnumAttrCase<"gelu", 4>,
      I32EnumAttrCase<"gelu_grad", 5>,
      I32EnumAttrCase<"silu", 6>,
      I32EnumAttrCase<"swiglu", 7>,
      I32EnumAttrCase<"swiglu_grad", 8>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tandem";
}
def Tandem_ElementwiseKindAttr
    : EnumAttr<Tandem_Dialect, Tandem_ElementwiseKind, "ew">;

def Tandem_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"avg", 1>,
      I32EnumAttrCase<"max", 2>,
      I32EnumAttrCase<"min", 3>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tandem";
}
def Tandem_ReduceKindAttr
    : EnumAttr<Tandem_Dialect, Tandem_ReduceKind, "reduce">;

/// Not an attribute: the collective kinds that CollectiveOpInterface and the
/// cost model use to tell collectives apart without isa<> chains.
def Tandem_CollectiveKind : I32EnumAttr<"CollectiveKind", "collective", [
      I32EnumAttrCase<"all_gather", 0>,
      I32EnumAttrCase<"reduce_scatter", 1>,
      I32EnumAttrCase<"all_reduce", 2>,
      I32EnumAttrCase<"all_to_all", 3>,
      I32EnumAttrCase<"permute", 4>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tandem";
}

/// The kind of work a compute op does; decides which cost formula applies.
def Tandem_ComputeKind : I32EnumAttr<"ComputeKind", "compute work", [
      I32EnumAttrCase<"gemm", 0>,
      I32EnumAttrCase<"attention", 1>,
      I32EnumAttrCase<"memory", 2>,
      I32EnumAttrCase<"opaque", 3>,
      I32EnumAttrCase<"attention_grad", 4>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tandem";
}

//===----------------------------------------------------------------------===//
// Target description
//===----------------------------------------------------------------------===//

def Tandem_TargetAttr : AttrDef<Tandem_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "Description of the GPU a step runs on";
  let description = [{
    The per-GPU figures the cost model needs. Attach it to the module as
    `tandem.target`.

    A known preset name alone gives the preset's values; any field may be
    overridden. An unknown name must give every field. The printed form lists
    only the fields that differ from the preset.

    ```mlir
    module attributes {tandem.target = #tandem.target<"h200">} {}
    module attributes {tandem.target = #tandem.target<"h200", collective_sms = 16>} {}
    module attributes {tandem.target = #tandem.target<"my-gpu",
        sm_count = 100, bf16_tflops = 500.0, f16_tflops = 500.0,
        fp8_tflops = 1000.0, f32_tflops = 60.0, hbm_gbps = 3000.0,
        hbm_bytes = 68719476736, gemm_efficiency = 0.8, hbm_efficiency = 0.9,
        collective_sms = 16, gemm_tile_m = 128, gemm_tile_n = 256,
        launch_overhead_us = 4.0>} {}
    ```

    Fields (units in the name): `sm_count`; dense tensor-core peaks
    `bf16_tflops`, `f16_tflops`, `fp8_tflops`, `f32_tflops`; HBM bandwidth
    `hbm_gbps` and capacity `hbm_bytes`; `gemm_efficiency` and
    `hbm_efficiency`, the fraction of peak that large GEMMs and streaming
    kernels reach; `collective_sms`, the SMs (CTAs) a collective occupies by
    default; `gemm_tile_m` x `gemm_tile_n`, the output tile a GEMM kernel
    computes per CTA (used for wave quantisation); `launch_overhead_us`, the
    fixed cost of one kernel. Presets: `h100`, `h200`, `mi300x`;
    docs/cost-model.md gives the source of every value.

    Bounds (TandemBounds.h), so that every time the cost model derives is
    positive and finite: `sm_count` in [1, 4096]; peaks and `hbm_gbps` in
    [1e-3, 1e7]; efficiencies in [1e-3, 1]; tiles in [1, 4096];
    `launch_overhead_us` in [0, 1e6].
  }];
  let parameters = (ins
    StringRefParameter<"preset or device name">:$name,
    "int64_t":$smCount,
    APFloatParameter<"">:$bf16Tflops,
    APFloatParameter<"">:$f16Tflops,
    APFloatParameter<"">:$fp8Tflops,
    APFloatParameter<"">:$f32Tflops,
    APFloatParameter<"">:$hbmGbps,
    "int64_t":$hbmBytes,
    APFloatParameter<"">:$gemmEfficiency,
    APFloatParameter<"">:$hbmEfficiency,
    "int64_t":$collectiveSms,
    "int64_t":$gemmTileM,
    "int64_t":$gemmTileN,
    APFloatParameter<"">:$launchOverheadUs
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The target of a preset name, or null if the name is not a preset.
    static TargetAttr getPreset(::mlir::MLIRContext *ctx,
                                ::llvm::StringRef name);
    /// The names of the presets, for error messages and tools.
    static ::llvm::ArrayRef<::llvm::StringRef> getPresetNames();
    /// HBM bandwidth in bytes/s.
    double getHbmBytesPerSecond() const {
      return getHbmGbps().convertToDouble() * 1e9;
    }
  }];
}

#endif // TANDEM_ATTRIBUTES_TD
