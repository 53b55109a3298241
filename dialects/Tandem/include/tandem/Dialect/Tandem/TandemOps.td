//===- TandemOps.td - Operations of the tandem dialect -----*- tablegen -*-===//
//
// Process groups, compute ops and collectives (blocking and start/wait forms).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_OPS_TD
#define TANDEM_OPS_TD

include "tandem/Dialect/Tandem/TandemDialect.td"
include "tandem/Dialect/Tandem/TandemAttributes.td"
include "tandem/Dialect/Tandem/TandemTypes.td"
include "tandem/Dialect/Tandem/TandemInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Process groups
//===----------------------------------------------------------------------===//

def Tandem_GroupOp : Tandem_Op<"group", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A process group: its size and how its GPUs are linked";
  let description = [{
    Declares a group of ranks that collectives run on. The cost model reads
    the topology and the links:

    * `switch`: every GPU reaches a switch (NVSwitch) over `links` links; any
      pair of GPUs, and a single peer-to-peer transfer, can use all of them.
    * `full_mesh`: every pair of GPUs has its own direct links (at least
      `size - 1` links per GPU); a native collective drives all links at once,
      a peer-to-peer step uses only the links to one peer.
    * `ring`: each GPU links to two neighbours.
    * `hierarchical`: `gpus_per_node` GPUs per node on a switch, nodes joined
      by a network giving `inter_node_bandwidth_gbps` per GPU per direction.

    `link_bandwidth_gbps` is per link and per direction, in GB/s (10^9 B/s);
    `link_latency_us` is the fixed cost of one communication step.

    Bounds (TandemBounds.h), so that every transfer time is positive and
    finite: `size` and `links_per_gpu` in [1, 2^20]; link bandwidths (intra-
    and inter-node) in [1e-3, 1e7] GB/s; latencies in [0, 1e6] us;
    `gpus_per_node` in [1, size].

    ```mlir
    tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
    tandem.group @mesh size(8) full_mesh links(7 x 64.0 GBps, 2.0 us)
    tandem.group @dp size(32) hierarchical links(18 x 25.0 GBps, 2.0 us)
        {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 50.0 : f64,
         inter_node_latency_us = 5.0 : f64}
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<1048576>]>:$size,
    Tandem_TopologyAttr:$topology,
    ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<1048576>]>:$links_per_gpu,
    F64Attr:$link_bandwidth_gbps,
    F64Attr:$link_latency_us,
    OptionalAttr<I64Attr>:$gpus_per_node,
    OptionalAttr<F64Attr>:$inter_node_bandwidth_gbps,
    OptionalAttr<F64Attr>:$inter_node_latency_us
  );
  let assemblyFormat = [{
    $sym_name `size` `(` $size `)` `` $topology
    `links` `(` $links_per_gpu `x` $link_bandwidth_gbps `GBps` `,`
    $link_latency_us `us` `)` attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute ops
//===----------------------------------------------------------------------===//

class Tandem_ComputeOp<string mnemonic, list<Trait> traits = []>
    : Tandem_Op<mnemonic, !listconcat(traits, [Pure])>;

def Tandem_MatmulOp : Tandem_ComputeOp<"matmul",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface, ["getGemmShape"]>]> {
  let summary = "GEMM with its role in the training step";
  let description = [{
    `result[M, N] = op(lhs)[M, K] * op(rhs)[K, N]`, where `op` transposes when
    `transpose_lhs` / `transpose_rhs` is set. The role says whether it is a
    forward GEMM (`fprop`), an input-gradient GEMM (`dgrad`) or a
    weight-gradient GEMM (`wgrad`); the optional `layer` names the linear layer
    (e.g. `"l3.fc1"`) so that passes can pair a layer's GEMMs and collectives.
    The result element type may differ from the operands' (e.g. an f32
    accumulation output).

    ```mlir
    %y = tandem.matmul fprop %x, %w {layer = "l0.qkv"}
        : tensor<2048x12288xbf16>, tensor<12288x4608xbf16> -> tensor<2048x4608xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.qkv"}
        : tensor<2048x12288xbf16>, tensor<2048x4608xbf16> -> tensor<12288x4608xbf16>
    ```
  }];
  let arguments = (ins Tandem_AnyTensor:$lhs, Tandem_AnyTensor:$rhs,
                   Tandem_MatmulRoleAttr:$role, UnitAttr:$transpose_lhs,
                   UnitAttr:$transpose_rhs, OptionalAttr<StrAttr>:$layer);
  let results = (outs Tandem_AnyTensor:$result);
  let assemblyFormat = [{
    `` $role $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($lhs) `,` type($rhs)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tandem_AttentionOp : Tandem_ComputeOp<"attention",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>]> {
  let summary = "Scaled dot-product attention on packed q/k/v";
  let description = [{
    Attention over a sequence of `S` tokens. `qkv` packs queries, keys and
    values along its last dimension: `(num_heads + 2 * num_kv_heads) *
    head_dim` columns (grouped-query attention when `num_kv_heads <
    num_heads`). The result has `num_heads * head_dim` columns. Head counts are
    the heads this rank holds.

    ```mlir
    %o = tandem.attention %qkv heads(12, 12) head_dim(128) causal
        : tensor<2048x4608xbf16> -> tensor<2048x1536xbf16>
    ```

    With `queries(N)`, every row of `qkv` is a key and value but only its
    **last `N` rows** are queries: query `i` sits at position `S - N + i`
    and, with `causal`, attends to keys `0 .. S - N + i` (the mask aligned to
    the bottom right). The result has `N` rows and equals the last `N` rows
    of the attention without `queries`. This is how a causal split of one
    sequence is written: part `j` attends to the keys of parts `0 .. j`
    (`qkv` is their concat) and computes only its own rows.

    ```mlir
    %o1 = tandem.attention %kv01 heads(12, 12) head_dim(128) causal
        queries(1024)
        : tensor<2048x4608xbf16> -> tensor<1024x1536xbf16>
    ```
  }];
  let arguments = (ins Tandem_AnyTensor:$qkv,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_heads,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_kv_heads,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$head_dim,
                   UnitAttr:$causal,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$queries,
                   OptionalAttr<StrAttr>:$layer);
  let results = (outs Tandem_AnyTensor:$result);
  let assemblyFormat = [{
    $qkv `heads` `(` $num_heads `,` $num_kv_heads `)` `head_dim` `(` $head_dim
    `)` (`causal` $causal^)? (`queries` `(` $queries^ `)`)? attr-dict `:`
    type($qkv) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// Rows of the result: `queries` when set, else every row of `qkv`.
    int64_t getQueryRows();
  }];
  let hasVerifier = 1;
}

def Tandem_AttentionGradOp : Tandem_ComputeOp<"attention_grad",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>]> {
  let summary = "Backward of tandem.attention";
  let description = [{
    Given the output gradient, the packed `qkv` and the forward output, yields
    the gradient of `qkv`. Attributes as for `tandem.attention`.

    ```mlir
    %dqkv = tandem.attention_grad %dout, %qkv, %o heads(12, 12) head_dim(128)
        causal : tensor<2048x1536xbf16>, tensor<2048x4608xbf16>,
                 tensor<2048x1536xbf16> -> tensor<2048x4608xbf16>
    ```
  }];
  let arguments = (ins Tandem_AnyTensor:$output_grad, Tandem_AnyTensor:$qkv,
                   Tandem_AnyTensor:$output,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_heads,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_kv_heads,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$head_dim,
                   UnitAttr:$causal, OptionalAttr<StrAttr>:$layer);
  let results = (outs Tandem_AnyTensor:$qkv_grad);
  let assemblyFormat = [{
    $output_grad `,` $qkv `,` $output `heads` `(` $num_heads `,` $num_kv_heads
    `)` `head_dim` `(` $head_dim `)` (`causal` $causal^)? attr-dict `:`
    type($output_grad) `,` type($qkv) `,` type($output) `->` type($qkv_grad)
  }];
  let extraClassDeclaration = [{
    /// FLOPs of the forward attention this backward differentiates (every
    /// row of `qkv` a query).
    double getForwardFlops();
    /// Whether forward attention kept this backward's softmax statistics
    /// (else the runtime recomputes them, a forward pass): `output` is the
    /// result of an attention over the same `qkv` with every row a query
    /// and the same heads and mask, or, for a causal sequence in segments,
    /// the in-place concat (interleave 1) of such attentions with
    /// `queries`, each over a prefix of `qkv` (`qkv` itself or its first
    /// in-place block) ending at its own rows. The rule of the runtime's
    /// executor (runtime/lib/Executor.cpp).
    bool hasKeptStatistics();
  }];
  let hasVerifier = 1;
}

def Tandem_NormOp : Tandem_ComputeOp<"norm",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>,
     AllTypesMatch<["input", "result"]>]> {
  let summary = "Layer norm or RMS norm over the last dimension";
  let description = [{
    Normalises each row of `input` over its last dimension and scales it by
    `weight` (one value per column).

    ```mlir
    %y = tandem.norm rms %x, %w : tensor<256x8192xbf16>, tensor<8192xbf16>
    ```
  }];
  let arguments = (ins Tandem_NormKindAttr:$kind, Tandem_AnyTensor:$input,
                   Tandem_AnyTensor:$weight, OptionalAttr<StrAttr>:$layer);
  let results = (outs Tandem_AnyTensor:$result);
  let assemblyFormat = [{
    `` $kind $input `,` $weight attr-dict `:` type($input) `,` type($weight)
  }];
  let hasVerifier = 1;
}

def Tandem_NormGradOp : Tandem_ComputeOp<"norm_grad",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>,
     AllTypesMatch<["input", "input_grad", "output_grad"]>,
     AllTypesMatch<["weight", "weight_grad"]>]> {
  let summary = "Backward of tandem.norm";
  let description = [{
    Yields the gradients of the input and of the weight.

    ```mlir
    %dx, %dw = tandem.norm_grad rms %dy, %x, %w
        : tensor<256x8192xbf16>, tensor<8192xbf16>
    ```
  }];
  let arguments = (ins Tandem_NormKindAttr:$kind, Tandem_AnyTensor:$output_grad,
                   Tandem_AnyTensor:$input, Tandem_AnyTensor:$weight,
                   OptionalAttr<StrAttr>:$layer);
  let results = (outs Tandem_AnyTensor:$input_grad,
                  Tandem_AnyTensor:$weight_grad);
  let assemblyFormat = [{
    `` $kind $output_grad `,` $input `,` $weight attr-dict `:` type($input) `,`
    type($weight)
  }];
  let hasVerifier = 1;
}

def Tandem_ElementwiseOp : Tandem_ComputeOp<"elementwise",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>]> {
  let summary = "Element-wise computation (bandwidth-bound)";
  let description = [{
    `add`, `mul` and `gelu_grad` take two operands and `copy`, `cast`, `gelu`
    and `silu` one, all of the result's shape (`cast` alone may change the
    element type). `swiglu` takes one operand whose last dimension is twice
    the result's (gate and up halves); `swiglu_grad` takes the output gradient
    and the `swiglu` input and yields a gradient of the input's shape.

    ```mlir
    %r = tandem.elementwise add %a, %b
        : tensor<256x8192xbf16>, tensor<256x8192xbf16> -> tensor<256x8192xbf16>
    ```
  }];
  let arguments = (ins Tandem_ElementwiseKindAttr:$kind,
                   Variadic<Tandem_AnyTensor>:$inputs,
                   OptionalAttr<StrAttr>:$layer);
  let results = (outs Tandem_AnyTensor:$result);
  let assemblyFormat = [{
    `` $kind $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tandem_OpaqueOp : Tandem_ComputeOp<"opaque",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>]> {
  let summary = "Compute whose cost is given, not derived";
  let description = [{
    Stands for compute that Tandem does not model in detail, such as a kernel
    imported from another compiler's program or a model's loss. It states its
    FLOPs and the bytes it moves; the cost model charges the roofline of both.
    It has value semantics and at least one result. The FLOPs are in
    [0, 1e24] and the bytes in [0, 2^48] (TandemBounds.h), so that its time is
    finite.

    ```mlir
    %dy = tandem.opaque "loss_grad"(%y) flops(1.0e9) bytes(8388608)
        : (tensor<256x8192xbf16>) -> tensor<256x8192xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<AnyType>:$inputs,
                   F64Attr:$declared_flops,
                   ConfinedAttr<I64Attr, [IntNonNegative,
                                          IntMaxValue<281474976710656>]>:$declared_bytes,
                   OptionalAttr<StrAttr>:$layer);
  let results = (outs Variadic<Tandem_AnyTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $inputs `)` `flops` `(` $declared_flops `)` `bytes` `(` $declared_bytes `)`
    attr-dict `:` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layout ops (chunk pipelines)
//===----------------------------------------------------------------------===//

def Tandem_SliceOp : Tandem_ComputeOp<"slice",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>]> {
  let summary = "Take one chunk of a tensor, optionally from every group";
  let description = [{
    Views `input` along `dim` as `interleave` groups of `chunks` equal blocks
    and yields block `chunk` of every group, concatenated in group order. With
    `interleave = 1` it is a plain contiguous chunk. Pipelining a GEMM that
    feeds a reduce-scatter uses `interleave` = group size: chunk `j` then
    holds the rows that every rank's shard `j` reduces.

    With `weights` (one positive integer per chunk, summing to `W`) the
    blocks are uneven: each group of extent `G` is `W` units of `G / W`, and
    block `j` is `weights[j]` units after the units of blocks `0 .. j-1`.
    Batch splitting cuts uneven parts this way (a wave-aware or balanced
    split of a layer's tokens).

    With `dim = 0` and `interleave = 1` the chunk is contiguous rows: a view
    that moves no bytes (`isView()`). Otherwise (other dimensions, or
    interleaved groups, which are strided) it is a copy of the result.

    Bounds (TandemBounds.h): `chunks` in [1, 1024] (a pipeline's depth),
    `interleave` in [1, 2^20] (a group size).

    Bounds (TandemBounds.h): `weights` each in [1, 1024], their sum in
    [1, 2^20].

    ```mlir
    %c = tandem.slice %a dim 0 chunk 1 of 4 interleave 8
        : tensor<2048x1024xbf16> -> tensor<512x1024xbf16>
    %d = tandem.slice %a dim 0 chunk 1 of 2 weights [1, 3] interleave 8
        : tensor<2048x1024xbf16> -> tensor<1536x1024xbf16>
    ```
  }];
  let extraClassDeclaration = [{
    /// Contiguous rows of the input: no data moves (getLayoutBytes).
    bool isView() { return getDim() == 0 && getInterleave() == 1; }
    /// Units per group: the weights' sum (`chunks` without weights).
    int64_t getWeightSum();
    /// Units of the groups before block `chunk`, and in block `chunk`.
    int64_t getBlockStart();
    int64_t getBlockUnits();
    /// Whether this is block `chunk` of `weights` (one each when empty) of
    /// `interleave` groups along dim 0.
    bool isRowBlock(int64_t chunk, llvm::ArrayRef<int64_t> weights,
                    int64_t interleave);
  }];
  let arguments = (ins Tandem_AnyTensor:$input,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$chunk,
                   ConfinedAttr<I64Attr, [IntMinValue<1>,
                                          IntMaxValue<1024>]>:$chunks,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<1>,
                                                  IntMaxValue<1048576>]>,
                                     "1">:$interleave,
                   OptionalAttr<DenseI64ArrayAttr>:$weights);
  let results = (outs Tandem_AnyTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `chunk` $chunk `of` $chunks
    (`weights` $weights^)? (`interleave` $interleave^)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tandem_ConcatOp : Tandem_ComputeOp<"concat",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>]> {
  let summary = "Assemble chunks, optionally interleaved by group";
  let description = [{
    The inverse of `tandem.slice`: views each of the N inputs along `dim` as
    `interleave` equal blocks and yields, for each group `g` in order, block
    `g` of every input in input order. With `interleave = 1` it is a plain
    concatenation. Inputs may differ along `dim` (the inverse of a slice
    with `weights`); each input's extent there divides by `interleave`.

    With `dim = 0` and `interleave = 1` the blocks are contiguous rows: when
    every input is a fresh value that no other concat uses
    (`writesInPlace()`), the plan lowering has each producer write its block
    of the result (other users read it there) and the op moves nothing.
    Otherwise (interleaved or other dimensions, inputs another concat uses,
    views) it is a copy of the result (getLayoutBytes). `interleave`
    is in [1, 2^20] (a group size).

    ```mlir
    %y = tandem.concat %y0, %y1 dim 0 interleave 8
        : tensor<1024x512xbf16>, tensor<1024x512xbf16> -> tensor<2048x512xbf16>
    ```
  }];
  let arguments = (ins Variadic<Tandem_AnyTensor>:$inputs,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<1>,
                                                  IntMaxValue<1048576>]>,
                                     "1">:$interleave);
  let results = (outs Tandem_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs `dim` $dim (`interleave` $interleave^)? attr-dict `:`
    type($inputs) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// Contiguous blocks whose producers can write them into the result:
    /// dim 0, interleave 1, and every input isInPlaceBlock.
    bool writesInPlace();
  }];
  let hasVerifier = 1;
}

def Tandem_RingConcatOp : Tandem_ComputeOp<"ring_concat",
    [DeclareOpInterfaceMethods<Tandem_ComputeOpInterface>,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Assemble the steps of a ring exchange in rank order";
  let description = [{
    Takes one input per rank of `group`: input `k` holds data that
    originated at rank `(rank - k) mod size`, as after `k` steps of a
    `tandem.permute` ring with shift 1. Yields the inputs concatenated along
    `dim` in rank order, i.e. block `(rank - k) mod size` is input `k`. The
    placement depends on the rank but moves no data between ranks. It is
    costed as a copy of the result, as the runtime runs it
    (getLayoutBytes).

    ```mlir
    %y = tandem.ring_concat %y0, %y1 on @tp dim 0
        : tensor<256x512xbf16>, tensor<256x512xbf16> -> tensor<512x512xbf16>
    ```
  }];
  let arguments = (ins Variadic<Tandem_AnyTensor>:$inputs,
                   FlatSymbolRefAttr:$group,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Tandem_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs `on` $group `dim` $dim attr-dict `:` type($inputs) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// Collectives are not Pure: every rank of the group must issue them in the
// same order, so CSE, DCE and code motion must not touch them. They declare
// that they read and write memory for that reason.
class Tandem_CollectiveOp<string mnemonic, bit async>
    : Tandem_Op<mnemonic, [
        Tandem_CollectiveOpInterface,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        MemoryEffects<[MemRead, MemWrite]>]> {
  defvar resultType = !if(async, Tandem_FutureType, Tandem_AnyTensor);
  let results = (outs resultType:$result);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isAsync() { return }] # !if(async, "true", "false") # [{; }
    ::mlir::RankedTensorType getResultTensorType() {
      return ::mlir::tandem::getCollectiveResultTensorType(getResult());
    }
    ::mlir::tandem::CollectiveKind getCollectiveKind();
    int64_t getPayloadBytes() {
      return ::mlir::tandem::getCollectivePayloadBytes(*this);
    }
  }];
}

multiclass Tandem_Collective<string mnemonic, string summaryText,
                             string descriptionText, dag extraArgs,
                             string format> {
  def Op : Tandem_CollectiveOp<mnemonic, 0> {
    let summary = summaryText;
    let description = descriptionText;
    let arguments = !con((ins Tandem_AnyTensor:$input, FlatSymbolRefAttr:$group),
                         extraArgs);
    let assemblyFormat = format;
  }
  def StartOp : Tandem_CollectiveOp<mnemonic # "_start", 1> {
    let summary = "Issue " # mnemonic # " asynchronously";
    let description = descriptionText # [{
    This `_start` form only issues the collective: its result is a future that
    exactly one `tandem.wait` in the same block must consume.
    }];
    let arguments = !con((ins Tandem_AnyTensor:$input, FlatSymbolRefAttr:$group),
                         extraArgs);
    let assemblyFormat = format;
  }
}

defm Tandem_AllGather : Tandem_Collective<"all_gather",
  "Gather every rank's shard along one dimension", [{
    Each rank contributes `input`; the result concatenates the group's inputs
    in rank order along `dim`, so `result.shape[dim] = size * input.shape[dim]`.

    ```mlir
    %y = tandem.all_gather %x on @tp dim 0
        : tensor<256x12288xbf16> -> tensor<2048x12288xbf16>
    ```
  }], (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim),
  "$input `on` $group `dim` $dim attr-dict `:` type($input) `->` qualified(type($result))">;

defm Tandem_ReduceScatter : Tandem_Collective<"reduce_scatter",
  "Reduce across ranks and keep this rank's slice", [{
    Reduces the group's inputs element-wise with `reduce` (default `sum`) and
    keeps this rank's slice along `dim`, so
    `input.shape[dim] = size * result.shape[dim]`.

    ```mlir
    %y = tandem.reduce_scatter %x on @tp dim 0
        : tensor<2048x12288xbf16> -> tensor<256x12288xbf16>
    ```
  }], (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
           DefaultValuedAttr<Tandem_ReduceKindAttr, "ReduceKind::sum">:$reduce),
  [{$input `on` $group `dim` $dim (`reduce` `` $reduce^)? attr-dict `:`
    type($input) `->` qualified(type($result))}]>;

defm Tandem_AllReduce : Tandem_Collective<"all_reduce",
  "Reduce across ranks, every rank keeps the whole result", [{
    ```mlir
    %g = tandem.all_reduce %dw on @dp : tensor<1536x12288xbf16>
        -> tensor<1536x12288xbf16>
    ```
  }], (ins DefaultValuedAttr<Tandem_ReduceKindAttr, "ReduceKind::sum">:$reduce),
  [{$input `on` $group (`reduce` `` $reduce^)? attr-dict `:` type($input) `->`
    qualified(type($result))}]>;

defm Tandem_AllToAll : Tandem_Collective<"all_to_all",
  "Exchange slices between every pair of ranks", [{
    Splits `input` into `size` slices along `split_dim`, sends slice `j` to
    rank `j`, and concatenates the slices received along `concat_dim`.

    ```mlir
    %y = tandem.all_to_all %x on @ep split 0 concat 1
        : tensor<1024x512xbf16> -> tensor<128x4096xbf16>
    ```
  }], (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$split_dim,
           ConfinedAttr<I64Attr, [IntNonNegative]>:$concat_dim),
  [{$input `on` $group `split` $split_dim `concat` $concat_dim attr-dict `:`
    type($input) `->` qualified(type($result))}]>;

defm Tandem_Permute : Tandem_Collective<"permute",
  "Send to a shifted peer and receive from the opposite one (send/recv)", [{
    Rank `r` sends `input` to rank `(r + shift) mod size` and receives the
    input of rank `(r - shift) mod size`: one step of a ring exchange, built
    from paired send/recv. A shift that is a multiple of the group size would
    be a copy and is rejected.

    ```mlir
    %y = tandem.permute %x on @tp shift 1
        : tensor<256x12288xbf16> -> tensor<256x12288xbf16>
    ```
  }], (ins I64Attr:$shift),
  "$input `on` $group `shift` $shift attr-dict `:` type($input) `->` qualified(type($result))">;

def Tandem_WaitOp : Tandem_Op<"wait", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"result is the tensor inside the future", "future",
                   "result",
                   "::llvm::cast<::mlir::tandem::FutureType>($_self).getValueType()">]> {
  let summary = "Wait for an asynchronous collective and take its result";
  let description = [{
    Blocks the stream it runs on until the collective that produced `future`
    has completed, then yields its result. Not `Pure`: moving it changes what
    may overlap and when memory is freed.

    ```mlir
    %y = tandem.wait %f : !tandem.future<tensor<2048x12288xbf16>>
    ```
  }];
  let arguments = (ins Tandem_FutureType:$future);
  let results = (outs Tandem_AnyTensor:$result);
  let assemblyFormat = "$future attr-dict `:` qualified(type($future))";
  let hasVerifier = 1;
}

#endif // TANDEM_OPS_TD
