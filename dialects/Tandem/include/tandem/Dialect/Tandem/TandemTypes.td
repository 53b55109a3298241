//===- TandemTypes.td - Types of the tandem dialect --------*- tablegen -*-===//

#ifndef TANDEM_TYPES_TD
#define TANDEM_TYPES_TD

include "tandem/Dialect/Tandem/TandemDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypes.td"

def Tandem_FutureType : TypeDef<Tandem_Dialect, "Future"> {
  let mnemonic = "future";
  let summary = "Handle to the result of a collective that is in flight";
  let description = [{
    Produced by the `_start` form of a collective, consumed by exactly one
    `tandem.wait`, which yields the tensor. Scheduling a step amounts to
    choosing which compute runs between a start and its wait.

    ```mlir
    %f = tandem.all_gather_start %x on @tp dim 0
        : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %y = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
  // The value type obeys the bounds of Tandem_AnyTensor.
  let genVerifyDecl = 1;
}

// Every tensor the dialect's ops take or yield: a static shape of integer or
// float elements and at most 2^48 bytes (kMaxTensorBytes, TandemBounds.h),
// so that sizes and byte counts derived from it cannot overflow.
def Tandem_AnyTensor : RankedTensorOf<[AnyFloat, AnyInteger],
    [HasStaticShapePred,
     CPred<"::mlir::tandem::isBoundedTensorType($_self)">],
    "statically shaped tensor of at most 2^48 bytes">;

#endif // TANDEM_TYPES_TD
