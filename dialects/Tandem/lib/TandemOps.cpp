//===- TandemOps.cpp - Verifiers and interface methods of tandem ops ------===//

#include "tandem/Dialect/Tandem/TandemOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tandem;

#include "tandem/Dialect/Tandem/TandemInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "tandem/Dialect/Tandem/TandemOps.cpp.inc"

//===----------------------------------------------------------------------===//
// FutureType
//===----------------------------------------------------------------------===//

LogicalResult FutureType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 RankedTensorType valueType) {
  if (!isBoundedTensorType(valueType))
    return emitError() << "future value type must be a statically shaped "
                          "tensor of at most 2^48 bytes, got "
                       << valueType;
  return success();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

int64_t mlir::tandem::getTensorBytes(RankedTensorType type) {
  // Verified IR holds bounded tensors only (Tandem_AnyTensor); saturate
  // rather than overflow on anything else.
  return getBoundedTensorBytes(type.getShape(), type.getElementType())
      .value_or(kMaxTensorBytes);
}

static double bytesOf(Value v) {
  return static_cast<double>(
      getTensorBytes(cast<RankedTensorType>(v.getType())));
}

static double elementsOf(Value v) {
  return static_cast<double>(
      cast<RankedTensorType>(v.getType()).getNumElements());
}

RankedTensorType mlir::tandem::getCollectiveResultTensorType(Value result) {
  if (auto future = dyn_cast<FutureType>(result.getType()))
    return future.getValueType();
  return cast<RankedTensorType>(result.getType());
}

GroupOp mlir::tandem::lookupGroup(Operation *from, FlatSymbolRefAttr group) {
  if (!group)
    return {};
  return SymbolTable::lookupNearestSymbolFrom<GroupOp>(from, group);
}

int64_t mlir::tandem::getCollectivePayloadBytes(CollectiveOpInterface op) {
  auto input = cast<RankedTensorType>(op.getInput().getType());
  if (op.getCollectiveKind() == CollectiveKind::all_gather)
    return getTensorBytes(op.getResultTensorType());
  return getTensorBytes(input);
}

/// Shape as text for diagnostics, e.g. "2048x12288".
static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  return s;
}

//===----------------------------------------------------------------------===//
// GroupOp
//===----------------------------------------------------------------------===//

/// Checks a link bandwidth (GB/s) and latency (us) against the bounds that
/// keep transfer times positive and finite (TandemBounds.h). `what` is
/// "link" or "inter-node".
static LogicalResult verifyLinkFigures(GroupOp op, StringRef what,
                                       double bandwidth, double latency) {
  // Written so that NaN fails both comparisons.
  if (!(bandwidth >= kMinBandwidthGbps && bandwidth <= kMaxBandwidthGbps))
    return op.emitOpError()
           << what << " bandwidth must be in [" << kMinBandwidthGbps << ", "
           << kMaxBandwidthGbps << "] GB/s, got " << bandwidth;
  if (!(latency >= 0.0 && latency <= kMaxLatencyUs))
    return op.emitOpError() << what << " latency must be in [0, "
                            << kMaxLatencyUs << "] us, got " << latency;
  return success();
}

LogicalResult GroupOp::verify() {
  if (failed(verifyLinkFigures(*this, "link",
                               getLinkBandwidthGbps().convertToDouble(),
                               getLinkLatencyUs().convertToDouble())))
    return failure();
  int64_t size = getSize();
  bool hasNodeFields = getGpusPerNode() || getInterNodeBandwidthGbps() ||
                       getInterNodeLatencyUs();
  switch (getTopology()) {
  case Topology::hierarchical: {
    if (!getGpusPerNode() || !getInterNodeBandwidthGbps() ||
        !getInterNodeLatencyUs())
      return emitOpError("a hierarchical group needs gpus_per_node, "
                         "inter_node_bandwidth_gbps and "
                         "inter_node_latency_us");
    int64_t perNode = static_cast<int64_t>(*getGpusPerNode());
    if (perNode < 1 || perNode > size)
      return emitOpError("gpus_per_node must be in [1, size = ")
             << size << "], got " << perNode;
    if (size % perNode != 0)
      return emitOpError("group size ")
             << size << " is not a multiple of gpus_per_node " << perNode;
    return verifyLinkFigures(*this, "inter-node",
                             getInterNodeBandwidthGbps()->convertToDouble(),
                             getInterNodeLatencyUs()->convertToDouble());
  }
  case Topology::full_mesh:
    if (int64_t(getLinksPerGpu()) < size - 1)
      return emitOpError("a full mesh of ")
             << size << " GPUs needs at least " << size - 1
             << " links per GPU, got " << getLinksPerGpu();
    break;
  case Topology::ring:
  case Topology::switch_:
    break;
  }
  if (hasNodeFields)
    return emitOpError("gpus_per_node and inter-node link fields are only "
                       "meaningful for a hierarchical group");
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

namespace {
struct MatmulDims {
  int64_t m, n, k, kRhs;
};
} // namespace

static MatmulDims getMatmulDims(MatmulOp op) {
  ArrayRef<int64_t> lhs = op.getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = op.getRhs().getType().getShape();
  MatmulDims d;
  d.m = op.getTransposeLhs() ? lhs[1] : lhs[0];
  d.k = op.getTransposeLhs() ? lhs[0] : lhs[1];
  d.kRhs = op.getTransposeRhs() ? rhs[1] : rhs[0];
  d.n = op.getTransposeRhs() ? rhs[0] : rhs[1];
  return d;
}

LogicalResult MatmulOp::verify() {
  auto lhsType = getLhs().getType();
  auto rhsType = getRhs().getType();
  auto resultType = getResult().getType();
  if (lhsType.getRank() != 2 || rhsType.getRank() != 2 ||
      resultType.getRank() != 2)
    return emitOpError("operands and result must be 2-D, got ranks ")
           << lhsType.getRank() << ", " << rhsType.getRank() << " -> "
           << resultType.getRank();
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOpError("operand element types differ: ")
           << lhsType.getElementType() << " vs " << rhsType.getElementType();
  MatmulDims d = getMatmulDims(*this);
  if (d.k != d.kRhs)
    return emitOpError("contraction sizes differ: lhs gives K = ")
           << d.k << ", rhs gives K = " << d.kRhs;
  if (resultType.getShape()[0] != d.m || resultType.getShape()[1] != d.n)
    return emitOpError("result shape must be ")
           << d.m << "x" << d.n << ", got " << shapeStr(resultType.getShape());
  return success();
}

ComputeKind MatmulOp::getComputeKind() { return ComputeKind::gemm; }
double MatmulOp::getFlops() {
  MatmulDims d = getMatmulDims(*this);
  return 2.0 * d.m * d.n * d.k;
}
double MatmulOp::getBytesAccessed() {
  return bytesOf(getLhs()) + bytesOf(getRhs()) + bytesOf(getResult());
}
Type MatmulOp::getComputeElementType() {
  return getLhs().getType().getElementType();
}
std::optional<GemmShape> MatmulOp::getGemmShape() {
  MatmulDims d = getMatmulDims(*this);
  return GemmShape{1, d.m, d.n, d.k};
}

//===----------------------------------------------------------------------===//
// AttentionOp / AttentionGradOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyAttentionShapes(Operation *op, RankedTensorType qkv,
                                           RankedTensorType out,
                                           int64_t numHeads, int64_t numKvHeads,
                                           int64_t headDim, int64_t outRows) {
  if (qkv.getRank() != 2 || out.getRank() != 2)
    return op->emitOpError("q/k/v and output must be 2-D [tokens, features]");
  if (numHeads % numKvHeads != 0)
    return op->emitOpError("num_heads (")
           << numHeads << ") must be a multiple of num_kv_heads (" << numKvHeads
           << ")";
  // Head counts are unbounded attributes: compute the column counts with
  // checked arithmetic and report an overflow as the mismatch it implies.
  std::optional<int64_t> heads = checkedProduct(2, numKvHeads);
  if (heads)
    heads = checkedSum(*heads, numHeads);
  std::optional<int64_t> qkvColsOr =
      heads ? checkedProduct(*heads, headDim) : std::nullopt;
  std::optional<int64_t> outCols = checkedProduct(numHeads, headDim);
  if (!qkvColsOr || !outCols || *qkvColsOr > kMaxTensorBytes)
    return op->emitOpError("head counts and head_dim give more than 2^48 "
                           "columns: (")
           << numHeads << " + 2 * " << numKvHeads << ") * " << headDim;
  int64_t qkvCols = *qkvColsOr;
  if (qkv.getShape()[1] != qkvCols)
    return op->emitOpError("packed q/k/v needs ")
           << qkvCols << " columns ((" << numHeads << " + 2 * " << numKvHeads
           << ") * " << headDim << "), got " << qkv.getShape()[1];
  if (out.getShape()[0] != outRows || out.getShape()[1] != *outCols)
    return op->emitOpError("output must be ")
           << outRows << "x" << *outCols << ", got "
           << shapeStr(out.getShape());
  if (qkv.getElementType() != out.getElementType())
    return op->emitOpError("q/k/v and output element types differ");
  return success();
}

/// Forward attention FLOPs: QK^T and PV, each 2*N*S*D per head for N queries
/// against S keys; a causal mask skips the keys after each query: of the
/// N x S pairs, N * (S - N) before the queries' own block and half of the
/// N x N block (S * S / 2 when every row is a query).
static double attentionForwardFlops(int64_t queries, int64_t keys,
                                    int64_t heads, int64_t headDim,
                                    bool causal) {
  double q = queries, s = keys;
  double pairs = causal ? q * (s - q) + q * q / 2 : q * s;
  return 4.0 * pairs * headDim * heads;
}

int64_t AttentionOp::getQueryRows() {
  if (std::optional<uint64_t> n = getQueries())
    return static_cast<int64_t>(*n);
  return getQkv().getType().getShape()[0];
}

LogicalResult AttentionOp::verify() {
  auto qkv = getQkv().getType();
  if (getQueries() && qkv.getRank() == 2 &&
      static_cast<int64_t>(*getQueries()) > qkv.getShape()[0])
    return emitOpError("queries(") << *getQueries() << ") must not exceed the "
                                   << qkv.getShape()[0] << " rows of q/k/v";
  return verifyAttentionShapes(*this, qkv, getType(), getNumHeads(),
                               getNumKvHeads(), getHeadDim(),
                               qkv.getRank() == 2 ? getQueryRows() : 0);
}
ComputeKind AttentionOp::getComputeKind() { return ComputeKind::attention; }
double AttentionOp::getFlops() {
  return attentionForwardFlops(getQueryRows(), getQkv().getType().getShape()[0],
                               getNumHeads(), getHeadDim(), getCausal());
}
double AttentionOp::getBytesAccessed() {
  return bytesOf(getQkv()) + bytesOf(getResult());
}
Type AttentionOp::getComputeElementType() {
  return getQkv().getType().getElementType();
}

LogicalResult AttentionGradOp::verify() {
  auto qkv = getQkv().getType();
  if (failed(verifyAttentionShapes(*this, qkv, getOutput().getType(),
                                   getNumHeads(), getNumKvHeads(), getHeadDim(),
                                   qkv.getRank() == 2 ? qkv.getShape()[0] : 0)))
    return failure();
  if (getOutputGrad().getType() != getOutput().getType())
    return emitOpError("output gradient must have the output's type");
  if (getQkvGrad().getType() != getQkv().getType())
    return emitOpError("q/k/v gradient must have the q/k/v type");
  return success();
}
ComputeKind AttentionGradOp::getComputeKind() {
  return ComputeKind::attention_grad;
}
// Backward runs five S x S GEMM-like products against the forward's two
// (dV, dP, dS->dQ, dK and the recomputed QK^T): 2.5x the forward FLOPs.
double AttentionGradOp::getForwardFlops() {
  int64_t tokens = getQkv().getType().getShape()[0];
  return attentionForwardFlops(tokens, tokens, getNumHeads(), getHeadDim(),
                               getCausal());
}
double AttentionGradOp::getFlops() { return 2.5 * getForwardFlops(); }
bool AttentionGradOp::hasKeptStatistics() {
  auto sameAttention = [&](AttentionOp forward) {
    return forward.getNumHeads() == getNumHeads() &&
           forward.getNumKvHeads() == getNumKvHeads() &&
           forward.getHeadDim() == getHeadDim() &&
           forward.getCausal() == getCausal();
  };
  int64_t rows = getQkv().getType().getShape()[0];
  if (auto forward = getOutput().getDefiningOp<AttentionOp>())
    return sameAttention(forward) && forward.getQkv() == getQkv() &&
           forward.getQueryRows() == rows;
  // A causal sequence in segments: each segment's forward writes its rows of
  // the sequence's statistics (runtime/lib/Executor.cpp).
  auto join = getOutput().getDefiningOp<ConcatOp>();
  if (!join || join.getDim() != 0 || join.getInterleave() != 1 ||
      join.getInputs().size() < 2 || !join.writesInPlace())
    return false;
  auto keys = getQkv().getDefiningOp<ConcatOp>();
  Value firstBlock = keys && keys.getDim() == 0 && keys.getInterleave() == 1 &&
                             keys.writesInPlace()
                         ? keys.getInputs().front()
                         : Value();
  int64_t row = 0;
  for (Value segment : join.getInputs()) {
    auto forward = segment.getDefiningOp<AttentionOp>();
    if (!forward || !sameAttention(forward) || row % 4 != 0)
      return false;
    Value prefix = forward.getQkv();
    int64_t queries = forward.getQueryRows();
    if ((prefix != getQkv() && prefix != firstBlock) ||
        cast<RankedTensorType>(prefix.getType()).getShape()[0] != row + queries)
      return false;
    row += queries;
  }
  return row == rows;
}
double AttentionGradOp::getBytesAccessed() {
  return bytesOf(getOutputGrad()) + bytesOf(getQkv()) + bytesOf(getOutput()) +
         bytesOf(getQkvGrad());
}
Type AttentionGradOp::getComputeElementType() {
  return getQkv().getType().getElementType();
}

//===----------------------------------------------------------------------===//
// NormOp / NormGradOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyNormWeight(Operation *op, RankedTensorType input,
                                      RankedTensorType weight) {
  if (input.getRank() < 1)
    return op->emitOpError("input must have at least one dimension");
  if (weight.getRank() != 1 || weight.getShape()[0] != input.getShape().back())
    return op->emitOpError("weight must be 1-D of the input's last dimension (")
           << input.getShape().back() << "), got "
           << shapeStr(weight.getShape());
  if (weight.getElementType() != input.getElementType())
    return op->emitOpError("weight and input element types differ");
  return success();
}

LogicalResult NormOp::verify() {
  return verifyNormWeight(*this, getInput().getType(), getWeight().getType());
}
ComputeKind NormOp::getComputeKind() { return ComputeKind::memory; }
// Mean/variance, normalise and scale: a handful of FLOPs per element; the
// op is bandwidth-bound either way.
double NormOp::getFlops() { return 5.0 * elementsOf(getInput()); }
double NormOp::getBytesAccessed() {
  return bytesOf(getInput()) + bytesOf(getWeight()) + bytesOf(getResult());
}
Type NormOp::getComputeElementType() {
  return getInput().getType().getElementType();
}

LogicalResult NormGradOp::verify() {
  return verifyNormWeight(*this, getInput().getType(), getWeight().getType());
}
ComputeKind NormGradOp::getComputeKind() { return ComputeKind::memory; }
double NormGradOp::getFlops() { return 8.0 * elementsOf(getInput()); }
double NormGradOp::getBytesAccessed() {
  return bytesOf(getOutputGrad()) + bytesOf(getInput()) + bytesOf(getWeight()) +
         bytesOf(getInputGrad()) + bytesOf(getWeightGrad());
}
Type NormGradOp::getComputeElementType() {
  return getInput().getType().getElementType();
}

//===----------------------------------------------------------------------===//
// ElementwiseOp
//===----------------------------------------------------------------------===//

/// Operand count of each element-wise kind.
static unsigned getElementwiseArity(ElementwiseKind kind) {
  switch (kind) {
  case ElementwiseKind::add:
  case ElementwiseKind::mul:
  case ElementwiseKind::gelu_grad:
  case ElementwiseKind::swiglu_grad:
    return 2;
  case ElementwiseKind::copy:
  case ElementwiseKind::cast:
  case ElementwiseKind::gelu:
  case ElementwiseKind::silu:
  case ElementwiseKind::swiglu:
    return 1;
  }
  llvm_unreachable("unknown element-wise kind");
}

/// Whether `wide` is `narrow` with its last dimension doubled.
static bool isDoubledLastDim(RankedTensorType narrow, RankedTensorType wide) {
  if (narrow.getRank() != wide.getRank() || narrow.getRank() == 0 ||
      narrow.getElementType() != wide.getElementType())
    return false;
  for (int64_t i = 0, e = narrow.getRank() - 1; i < e; ++i)
    if (narrow.getShape()[i] != wide.getShape()[i])
      return false;
  return wide.getShape().back() == 2 * narrow.getShape().back();
}

LogicalResult ElementwiseOp::verify() {
  ElementwiseKind kind = getKind();
  StringRef name = stringifyElementwiseKind(kind);
  unsigned arity = getElementwiseArity(kind);
  if (getInputs().size() != arity)
    return emitOpError("'") << name << "' takes " << arity
                            << " operand(s), got " << getInputs().size();
  RankedTensorType result = getResult().getType();
  auto operandType = [&](unsigned i) {
    return cast<RankedTensorType>(getInputs()[i].getType());
  };
  switch (kind) {
  case ElementwiseKind::cast:
    if (operandType(0).getShape() != result.getShape())
      return emitOpError("'cast' keeps the shape: ")
             << shapeStr(operandType(0).getShape()) << " vs "
             << shapeStr(result.getShape());
    return success();
  case ElementwiseKind::swiglu:
    if (!isDoubledLastDim(result, operandType(0)))
      return emitOpError("'swiglu' operand must be the result with its last "
                         "dimension doubled, got ")
             << operandType(0) << " -> " << result;
    return success();
  case ElementwiseKind::swiglu_grad:
    if (operandType(1) != result || !isDoubledLastDim(operandType(0), result))
      return emitOpError("'swiglu_grad' takes the output gradient and the "
                         "swiglu input, and yields the input's type");
    return success();
  default:
    for (unsigned i = 0; i < arity; ++i)
      if (operandType(i) != result)
        return emitOpError("'")
               << name << "' operand #" << i << " has type " << operandType(i)
               << ", expected the result type " << result;
    return success();
  }
}

ComputeKind ElementwiseOp::getComputeKind() { return ComputeKind::memory; }
double ElementwiseOp::getFlops() {
  // Rough per-element FLOP counts; these ops are bandwidth-bound on every
  // target we model, so only the bytes decide their cost.
  double perElement = 1.0;
  switch (getKind()) {
  case ElementwiseKind::copy:
  case ElementwiseKind::cast:
    perElement = 0.0;
    break;
  case ElementwiseKind::gelu:
  case ElementwiseKind::silu:
  case ElementwiseKind::swiglu:
    perElement = 8.0;
    break;
  case ElementwiseKind::gelu_grad:
  case ElementwiseKind::swiglu_grad:
    perElement = 12.0;
    break;
  default:
    break;
  }
  return perElement * elementsOf(getResult());
}
double ElementwiseOp::getBytesAccessed() {
  double bytes = bytesOf(getResult());
  for (Value v : getInputs())
    bytes += bytesOf(v);
  return bytes;
}
Type ElementwiseOp::getComputeElementType() {
  return getResult().getType().getElementType();
}

//===----------------------------------------------------------------------===//
// OpaqueOp
//===----------------------------------------------------------------------===//

LogicalResult OpaqueOp::verify() {
  if (getKernel().empty())
    return emitOpError("kernel name must not be empty");
  double flops = getDeclaredFlops().convertToDouble();
  if (!(flops >= 0.0 && flops <= kMaxDeclaredFlops))
    return emitOpError("flops must be in [0, ")
           << kMaxDeclaredFlops << "], got " << flops;
  if (getResults().empty())
    return emitOpError("must have at least one result: an opaque op without "
                       "results would be dead code");
  return success();
}
ComputeKind OpaqueOp::getComputeKind() { return ComputeKind::opaque; }
double OpaqueOp::getFlops() { return getDeclaredFlops().convertToDouble(); }
double OpaqueOp::getBytesAccessed() {
  return static_cast<double>(getDeclaredBytes());
}
Type OpaqueOp::getComputeElementType() {
  return cast<RankedTensorType>(getResult(0).getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Checks that hold for every collective: matching element types, and, for a
/// `_start` form, that exactly one tandem.wait in the same block consumes the
/// future.
static LogicalResult verifyCollectiveCommon(CollectiveOpInterface op) {
  Operation *operation = op.getOperation();
  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = op.getResultTensorType();
  if (input.getElementType() != result.getElementType())
    return operation->emitOpError("input and result element types differ: ")
           << input.getElementType() << " vs " << result.getElementType();
  if (!op.isAsync())
    return success();
  Value future = operation->getResult(0);
  unsigned waits = 0;
  for (OpOperand &use : future.getUses()) {
    Operation *user = use.getOwner();
    if (!isa<WaitOp>(user))
      return operation->emitOpError("future may only be consumed by "
                                    "tandem.wait, not by '")
             << user->getName() << "'";
    if (user->getBlock() != operation->getBlock())
      return operation->emitOpError(
          "future must be waited on in the block that issues it");
    ++waits;
  }
  if (waits != 1)
    return operation->emitOpError("future must be waited on exactly once, "
                                  "found ")
           << waits << " tandem.wait";
  return success();
}

static LogicalResult checkDim(Operation *op, StringRef what, int64_t dim,
                              int64_t rank) {
  if (dim >= rank)
    return op->emitOpError()
           << what << " " << dim << " is out of range for rank " << rank;
  return success();
}

/// `big` is `small` with dimension `dim` multiplied by some factor; the
/// factor itself is checked against the group size in verifySymbolUses.
static LogicalResult verifyScaledDim(Operation *op, RankedTensorType small,
                                     RankedTensorType big, int64_t dim,
                                     StringRef smallName, StringRef bigName) {
  if (small.getRank() != big.getRank())
    return op->emitOpError()
           << smallName << " and " << bigName << " ranks differ";
  if (failed(checkDim(op, "dim", dim, small.getRank())))
    return failure();
  for (int64_t i = 0; i < small.getRank(); ++i)
    if (i != dim && small.getShape()[i] != big.getShape()[i])
      return op->emitOpError()
             << smallName << " and " << bigName << " differ in dimension " << i
             << "; only dimension " << dim << " may differ";
  return success();
}

/// Looks the group up and checks that `big.shape[dim] == size *
/// small.shape[dim]`.
static LogicalResult
verifyGroupScaledDim(Operation *op, SymbolTableCollection &symbols,
                     FlatSymbolRefAttr groupRef, RankedTensorType small,
                     RankedTensorType big, int64_t dim, StringRef relation) {
  auto group = symbols.lookupNearestSymbolFrom<GroupOp>(op, groupRef.getAttr());
  if (!group)
    return op->emitOpError() << groupRef << " does not name a tandem.group";
  int64_t size = group.getSize();
  // Both factors are bounded (2^20 ranks, 2^48 elements), but the product
  // may not fit: an overflow is a mismatch, never a wrapped match.
  std::optional<int64_t> expected = checkedProduct(size, small.getShape()[dim]);
  if (!expected || big.getShape()[dim] != *expected) {
    auto diag = op->emitOpError()
                << relation << ": dimension " << dim << " must be " << size
                << " (group size) x " << small.getShape()[dim] << " = ";
    if (expected)
      diag << *expected;
    else
      diag << "(overflows int64)";
    return diag << ", got " << big.getShape()[dim];
  }
  return success();
}

static LogicalResult verifyGroupExists(Operation *op,
                                       SymbolTableCollection &symbols,
                                       FlatSymbolRefAttr groupRef,
                                       GroupOp *out = nullptr) {
  auto group = symbols.lookupNearestSymbolFrom<GroupOp>(op, groupRef.getAttr());
  if (!group)
    return op->emitOpError() << groupRef << " does not name a tandem.group";
  if (out)
    *out = group;
  return success();
}

#define TANDEM_COLLECTIVE_KIND(OP, KIND)                                       \
  CollectiveKind OP::getCollectiveKind() { return CollectiveKind::KIND; }
TANDEM_COLLECTIVE_KIND(AllGatherOp, all_gather)
TANDEM_COLLECTIVE_KIND(AllGatherStartOp, all_gather)
TANDEM_COLLECTIVE_KIND(ReduceScatterOp, reduce_scatter)
TANDEM_COLLECTIVE_KIND(ReduceScatterStartOp, reduce_scatter)
TANDEM_COLLECTIVE_KIND(AllReduceOp, all_reduce)
TANDEM_COLLECTIVE_KIND(AllReduceStartOp, all_reduce)
TANDEM_COLLECTIVE_KIND(AllToAllOp, all_to_all)
TANDEM_COLLECTIVE_KIND(AllToAllStartOp, all_to_all)
TANDEM_COLLECTIVE_KIND(PermuteOp, permute)
TANDEM_COLLECTIVE_KIND(PermuteStartOp, permute)
#undef TANDEM_COLLECTIVE_KIND

// All-gather.
template <typename OpT> static LogicalResult verifyAllGather(OpT op) {
  if (failed(verifyCollectiveCommon(op)))
    return failure();
  return verifyScaledDim(op, op.getInput().getType(), op.getResultTensorType(),
                         op.getDim(), "input", "result");
}
template <typename OpT>
static LogicalResult verifyAllGatherSymbols(OpT op,
                                            SymbolTableCollection &symbols) {
  return verifyGroupScaledDim(op, symbols, op.getGroupAttr(),
                              op.getInput().getType(), op.getResultTensorType(),
                              op.getDim(), "all-gather result");
}

// Reduce-scatter.
template <typename OpT> static LogicalResult verifyReduceScatter(OpT op) {
  if (failed(verifyCollectiveCommon(op)))
    return failure();
  return verifyScaledDim(op, op.getResultTensorType(), op.getInput().getType(),
                         op.getDim(), "result", "input");
}
template <typename OpT>
static LogicalResult
verifyReduceScatterSymbols(OpT op, SymbolTableCollection &symbols) {
  return verifyGroupScaledDim(op, symbols, op.getGroupAttr(),
                              op.getResultTensorType(), op.getInput().getType(),
                              op.getDim(), "reduce-scatter input");
}

/// All-reduce and permute: each rank's result has its input's type.
template <typename OpT>
static LogicalResult verifyTypePreservingCollective(OpT op) {
  if (failed(verifyCollectiveCommon(op)))
    return failure();
  if (op.getInput().getType() != op.getResultTensorType())
    return op.emitOpError("result type must equal the input type");
  return success();
}

// All-reduce.
template <typename OpT> static LogicalResult verifyAllReduce(OpT op) {
  return verifyTypePreservingCollective(op);
}
template <typename OpT>
static LogicalResult verifyAllReduceSymbols(OpT op,
                                            SymbolTableCollection &symbols) {
  return verifyGroupExists(op, symbols, op.getGroupAttr());
}

// All-to-all.
template <typename OpT> static LogicalResult verifyAllToAll(OpT op) {
  if (failed(verifyCollectiveCommon(op)))
    return failure();
  RankedTensorType input = op.getInput().getType();
  RankedTensorType result = op.getResultTensorType();
  if (input.getRank() != result.getRank())
    return op.emitOpError("input and result ranks differ");
  if (failed(checkDim(op, "split dim", op.getSplitDim(), input.getRank())) ||
      failed(checkDim(op, "concat dim", op.getConcatDim(), input.getRank())))
    return failure();
  if (input.getNumElements() != result.getNumElements())
    return op.emitOpError("all-to-all keeps the element count: ")
           << input.getNumElements() << " vs " << result.getNumElements();
  return success();
}
template <typename OpT>
static LogicalResult verifyAllToAllSymbols(OpT op,
                                           SymbolTableCollection &symbols) {
  GroupOp group;
  if (failed(verifyGroupExists(op, symbols, op.getGroupAttr(), &group)))
    return failure();
  int64_t size = group.getSize();
  RankedTensorType input = op.getInput().getType();
  int64_t split = op.getSplitDim(), concat = op.getConcatDim();
  if (input.getShape()[split] % size != 0)
    return op.emitOpError("split dimension ")
           << split << " (" << input.getShape()[split]
           << ") is not divisible by the group size " << size;
  SmallVector<int64_t> expected(input.getShape());
  expected[split] /= size;
  std::optional<int64_t> concatSize = checkedProduct(expected[concat], size);
  if (!concatSize)
    return op.emitOpError("concat dimension ")
           << concat << " (" << expected[concat] << ") times the group size "
           << size << " overflows int64";
  expected[concat] = *concatSize;
  if (op.getResultTensorType().getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError("result shape must be ")
           << shapeStr(expected) << ", got "
           << shapeStr(op.getResultTensorType().getShape());
  return success();
}

// Permute.
template <typename OpT> static LogicalResult verifyPermute(OpT op) {
  return verifyTypePreservingCollective(op);
}
template <typename OpT>
static LogicalResult verifyPermuteSymbols(OpT op,
                                          SymbolTableCollection &symbols) {
  GroupOp group;
  if (failed(verifyGroupExists(op, symbols, op.getGroupAttr(), &group)))
    return failure();
  // I64Attr's C++ type is unsigned: compute in signed arithmetic so that
  // negative shifts work.
  int64_t shift = static_cast<int64_t>(op.getShift());
  int64_t size = static_cast<int64_t>(group.getSize());
  if (shift % size == 0)
    return op.emitOpError("shift ")
           << shift << " is a multiple of the group size " << size
           << ": every rank would send to itself";
  return success();
}

#define TANDEM_COLLECTIVE_VERIFIERS(OP, FN)                                    \
  LogicalResult OP::verify() { return FN(*this); }                             \
  LogicalResult OP::verifySymbolUses(SymbolTableCollection &symbols) {         \
    return FN##Symbols(*this, symbols);                                        \
  }
TANDEM_COLLECTIVE_VERIFIERS(AllGatherOp, verifyAllGather)
TANDEM_COLLECTIVE_VERIFIERS(AllGatherStartOp, verifyAllGather)
TANDEM_COLLECTIVE_VERIFIERS(ReduceScatterOp, verifyReduceScatter)
TANDEM_COLLECTIVE_VERIFIERS(ReduceScatterStartOp, verifyReduceScatter)
TANDEM_COLLECTIVE_VERIFIERS(AllReduceOp, verifyAllReduce)
TANDEM_COLLECTIVE_VERIFIERS(AllReduceStartOp, verifyAllReduce)
TANDEM_COLLECTIVE_VERIFIERS(AllToAllOp, verifyAllToAll)
TANDEM_COLLECTIVE_VERIFIERS(AllToAllStartOp, verifyAllToAll)
TANDEM_COLLECTIVE_VERIFIERS(PermuteOp, verifyPermute)
TANDEM_COLLECTIVE_VERIFIERS(PermuteStartOp, verifyPermute)
#undef TANDEM_COLLECTIVE_VERIFIERS

//===----------------------------------------------------------------------===//
// WaitOp
//===----------------------------------------------------------------------===//

LogicalResult WaitOp::verify() {
  auto start = getFuture().getDefiningOp<CollectiveOpInterface>();
  if (!start || !start.isAsync())
    return emitOpError("future must come from the _start form of a "
                       "collective in this function");
  return success();
}

//===----------------------------------------------------------------------===//
// Layout ops
//===----------------------------------------------------------------------===//

double mlir::tandem::getLayoutBytes(bool view, RankedTensorType result) {
  return view ? 0.0 : 2.0 * double(getTensorBytes(result));
}

bool mlir::tandem::isInPlaceBlock(Value block) {
  // One concat uses it, once; other users read it where that concat keeps
  // it.
  Operation *user = nullptr;
  for (OpOperand &use : block.getUses()) {
    // A returned block stays a buffer of its own (plan outputs are not
    // views).
    if (use.getOwner()->hasTrait<OpTrait::IsTerminator>())
      return false;
    if (!isa<ConcatOp>(use.getOwner()))
      continue;
    if (user)
      return false;
    user = use.getOwner();
  }
  Operation *def = block.getDefiningOp();
  if (!user || !def || def->getBlock() != user->getBlock() ||
      def->getNumResults() != 1)
    return false;
  if (auto wait = dyn_cast<WaitOp>(def)) {
    Value future = wait.getFuture();
    Operation *start = future.getDefiningOp();
    return future.hasOneUse() && start && start->getNumResults() == 1 &&
           isa<CollectiveOpInterface>(start) &&
           start->getBlock() == def->getBlock();
  }
  // A copying slice writes its own result; a view, another assembly or an
  // opaque kernel (whose output the runtime does not place) does not.
  if (auto slice = dyn_cast<SliceOp>(def))
    return !slice.isView();
  if (isa<ConcatOp, RingConcatOp, OpaqueOp>(def))
    return false;
  return isa<ComputeOpInterface, CollectiveOpInterface>(def);
}

bool ConcatOp::writesInPlace() {
  if (getDim() != 0 || getInterleave() != 1)
    return false;
  llvm::SmallPtrSet<Value, 8> seen;
  for (Value v : getInputs())
    if (!seen.insert(v).second || !isInPlaceBlock(v))
      return false;
  return true;
}

/// Checks that `a` and `b` agree in every dimension but `dim`.
static LogicalResult verifySameButDim(Operation *op, RankedTensorType a,
                                      RankedTensorType b, int64_t dim,
                                      StringRef what) {
  if (a.getRank() != b.getRank() || a.getElementType() != b.getElementType())
    return op->emitOpError() << what << " must have the same rank and element "
                             << "type, got " << a << " and " << b;
  if (failed(checkDim(op, "dim", dim, a.getRank())))
    return failure();
  for (int64_t i = 0; i < a.getRank(); ++i)
    if (i != dim && a.getShape()[i] != b.getShape()[i])
      return op->emitOpError() << what << " differ in dimension " << i
                               << "; only dimension " << dim << " may differ";
  return success();
}

int64_t SliceOp::getWeightSum() {
  std::optional<ArrayRef<int64_t>> weights = getWeights();
  if (!weights)
    return getChunks();
  int64_t sum = 0;
  for (int64_t w : *weights)
    sum += w;
  return sum;
}

int64_t SliceOp::getBlockStart() {
  std::optional<ArrayRef<int64_t>> weights = getWeights();
  if (!weights)
    return getChunk();
  int64_t start = 0;
  for (int64_t w : weights->take_front(getChunk()))
    start += w;
  return start;
}

int64_t SliceOp::getBlockUnits() {
  std::optional<ArrayRef<int64_t>> weights = getWeights();
  return weights ? (*weights)[getChunk()] : 1;
}

bool SliceOp::isRowBlock(int64_t chunk, ArrayRef<int64_t> weights,
                         int64_t interleave) {
  if (getDim() != 0 || int64_t(getChunk()) != chunk ||
      int64_t(getInterleave()) != interleave)
    return false;
  std::optional<ArrayRef<int64_t>> own = getWeights();
  bool even = llvm::all_of(weights, [](int64_t w) { return w == 1; });
  if (!own)
    return even && int64_t(getChunks()) == int64_t(weights.size());
  return *own == weights;
}

LogicalResult SliceOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getResult().getType();
  if (failed(
          verifySameButDim(*this, input, result, getDim(), "input and result")))
    return failure();
  int64_t chunks = getChunks(), groups = getInterleave();
  if (getChunk() >= uint64_t(chunks))
    return emitOpError("chunk ")
           << getChunk() << " is out of range for " << chunks << " chunks";
  int64_t units = chunks;
  if (std::optional<ArrayRef<int64_t>> weights = getWeights()) {
    if (int64_t(weights->size()) != chunks)
      return emitOpError("has ")
             << weights->size() << " weight(s) for " << chunks << " chunks";
    units = 0;
    for (auto [j, w] : llvm::enumerate(*weights)) {
      if (w < 1 || w > kMaxChunkWeight)
        return emitOpError("weight ") << j << " (" << w << ") is outside [1, "
                                      << kMaxChunkWeight << "]";
      units += w;
    }
    if (units > kMaxWeightSum)
      return emitOpError("weights sum to ")
             << units << ", more than " << kMaxWeightSum;
  }
  int64_t size = input.getShape()[getDim()];
  // ODS bounds both factors (1024 chunks or 2^20 units, 2^20 groups); the
  // product is checked all the same, as every size product in the dialect
  // is.
  std::optional<int64_t> blocks = checkedProduct(units, groups);
  if (!blocks || size % *blocks != 0)
    return emitOpError("dimension ")
           << getDim() << " (" << size << ") is not divisible by " << groups
           << " group(s) x " << units
           << (getWeights() ? " weight units" : " chunks");
  int64_t expected = size / units * getBlockUnits();
  if (result.getShape()[getDim()] != expected)
    return emitOpError("result dimension ")
           << getDim() << " must be " << expected << ", got "
           << result.getShape()[getDim()];
  return success();
}

/// Checks shared by the ops that assemble N inputs along `dim`, each split
/// into `interleave` groups: inputs that differ at most along `dim` (not at
/// all with `equalInputs`), and the result their concatenation.
static LogicalResult verifyAssembly(Operation *op, ValueRange inputs,
                                    RankedTensorType result, int64_t dim,
                                    int64_t interleave, bool equalInputs) {
  if (inputs.empty())
    return op->emitOpError("needs at least one input");
  auto first = cast<RankedTensorType>(inputs.front().getType());
  if (failed(verifySameButDim(op, first, result, dim, "inputs and result")))
    return failure();
  int64_t expected = 0;
  for (Value v : inputs) {
    auto type = cast<RankedTensorType>(v.getType());
    if (equalInputs && type != first)
      return op->emitOpError("inputs must all have type ")
             << first << ", got " << type;
    if (failed(verifySameButDim(op, type, result, dim, "inputs and result")))
      return failure();
    int64_t piece = type.getShape()[dim];
    if (piece % interleave != 0)
      return op->emitOpError("input dimension ")
             << dim << " (" << piece << ") is not divisible by " << interleave
             << " group(s)";
    std::optional<int64_t> sum = checkedSum(expected, piece);
    if (!sum)
      return op->emitOpError("result dimension ")
             << dim << " would be the sum of " << inputs.size()
             << " inputs, which overflows int64";
    expected = *sum;
  }
  if (result.getShape()[dim] != expected)
    return op->emitOpError("result dimension ")
           << dim << " must be " << expected << ", got "
           << result.getShape()[dim];
  return success();
}

LogicalResult ConcatOp::verify() {
  return verifyAssembly(*this, getInputs(), getResult().getType(), getDim(),
                        getInterleave(), /*equalInputs=*/false);
}

LogicalResult RingConcatOp::verify() {
  return verifyAssembly(*this, getInputs(), getResult().getType(), getDim(),
                        /*interleave=*/1, /*equalInputs=*/true);
}

LogicalResult RingConcatOp::verifySymbolUses(SymbolTableCollection &symbols) {
  GroupOp group;
  if (failed(verifyGroupExists(*this, symbols, getGroupAttr(), &group)))
    return failure();
  if (int64_t(getInputs().size()) != int64_t(group.getSize()))
    return emitOpError("needs one input per rank of ")
           << getGroupAttr() << " (" << group.getSize() << "), got "
           << getInputs().size();
  return success();
}

// Layout ops compute nothing; a view moves nothing either (getLayoutBytes).
#define TANDEM_LAYOUT_OP_COSTS(OP, VIEW)                                       \
  ComputeKind OP::getComputeKind() { return ComputeKind::memory; }             \
  double OP::getFlops() { return 0.0; }                                        \
  double OP::getBytesAccessed() {                                              \
    return getLayoutBytes(VIEW, getResult().getType());                        \
  }                                                                            \
  Type OP::getComputeElementType() {                                           \
    return getResult().getType().getElementType();                             \
  }
TANDEM_LAYOUT_OP_COSTS(SliceOp, isView())
TANDEM_LAYOUT_OP_COSTS(ConcatOp, writesInPlace())
TANDEM_LAYOUT_OP_COSTS(RingConcatOp, false)
#undef TANDEM_LAYOUT_OP_COSTS
