//===- Plan.cpp - Plan enums, buffer sizes and validation -----------------===//
//
// Names of the plan's enums as the JSON form spells them (they match the
// tandem dialect's spelling of the same concepts), and validatePlan: the
// plan's bounds first, before any table sized by a count is allocated, then
// buffers, then every step with the byte ranges it accesses (PlanAccesses.h).
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Plan.h"
#include "tandem/runtime/CheckedMath.h"
#include "tandem/runtime/MemoryPlanner.h"
#include "tandem/runtime/PlanAccesses.h"

#include <algorithm>
#include <sstream>

namespace tandem {
namespace runtime {

int64_t dtypeBytes(DType type) {
  switch (type) {
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
    return 4;
  }
  return 0;
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

std::optional<DType> parseDType(const std::string &name) {
  for (DType t : {DType::BF16, DType::F16, DType::F32})
    if (name == dtypeName(t))
      return t;
  return std::nullopt;
}

const char *elementwiseKindName(ElementwiseKind kind) {
  switch (kind) {
  case ElementwiseKind::Add:
    return "add";
  case ElementwiseKind::Mul:
    return "mul";
  case ElementwiseKind::Copy:
    return "copy";
  case ElementwiseKind::Cast:
    return "cast";
  case ElementwiseKind::Gelu:
    return "gelu";
  case ElementwiseKind::GeluGrad:
    return "gelu_grad";
  case ElementwiseKind::Silu:
    return "silu";
  case ElementwiseKind::Swiglu:
    return "swiglu";
  case ElementwiseKind::SwigluGrad:
    return "swiglu_grad";
  }
  return "?";
}

std::optional<ElementwiseKind> parseElementwiseKind(const std::string &name) {
  for (int i = 0; i <= static_cast<int>(ElementwiseKind::SwigluGrad); ++i) {
    auto kind = static_cast<ElementwiseKind>(i);
    if (name == elementwiseKindName(kind))
      return kind;
  }
  return std::nullopt;
}

const char *collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Permute:
    return "permute";
  }
  return "?";
}

const char *stepKindName(StepKind kind) {
  switch (kind) {
  case StepKind::Matmul:
    return "matmul";
  case StepKind::Attention:
    return "attention";
  case StepKind::AttentionGrad:
    return "attention_grad";
  case StepKind::Norm:
    return "norm";
  case StepKind::NormGrad:
    return "norm_grad";
  case StepKind::Elementwise:
    return "elementwise";
  case StepKind::Opaque:
    return "opaque";
  case StepKind::Slice:
    return "slice";
  case StepKind::Concat:
    return "concat";
  case StepKind::RingConcat:
    return "ring_concat";
  case StepKind::Collective:
    return "collective";
  case StepKind::Sync:
    return "sync";
  }
  return "?";
}

std::optional<StepKind> parseStepKind(const std::string &name) {
  for (int i = 0; i <= static_cast<int>(StepKind::Sync); ++i) {
    auto kind = static_cast<StepKind>(i);
    if (name == stepKindName(kind))
      return kind;
  }
  return std::nullopt;
}

int64_t Buffer::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    if (!checkedMul(n, d, n))
      return -1;
  return n;
}

int64_t Buffer::bytes() const {
  int64_t n = elements(), b;
  return n >= 0 && checkedMul(n, dtypeBytes(type), b) ? b : -1;
}

namespace {

using Shape = std::vector<int64_t>;

std::string shapeText(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string overflows(const std::string &what) {
  return what + " overflows a 64-bit integer";
}

/// A slice's `weights` (non-empty): one weight >= 1 per chunk, their sum W
/// dividing the group extent (extent / interleave). On success `extent`
/// (dimension `dim` of the input) becomes the result's: interleave times
/// (group / W) * weights[chunk]. `chunk`, `chunks` and `interleave` are
/// checked before. Returns "" or the problem.
std::string checkSliceWeights(const Step &step, int64_t &extent) {
  if (static_cast<int64_t>(step.weights.size()) != step.chunks)
    return "slice has " + std::to_string(step.weights.size()) +
           " weights for " + std::to_string(step.chunks) +
           " chunks; weights needs one per chunk";
  int64_t total = 0;
  for (size_t j = 0; j < step.weights.size(); ++j) {
    if (step.weights[j] < 1)
      return "slice weight " + std::to_string(j) + " is " +
             std::to_string(step.weights[j]) + "; weights must be >= 1";
    if (!checkedAdd(total, step.weights[j], total))
      return overflows("the sum of the slice weights");
  }
  if (extent % step.interleave != 0)
    return "slice interleave " + std::to_string(step.interleave) +
           " does not divide dimension " + std::to_string(step.dim) +
           " (extent " + std::to_string(extent) + ")";
  int64_t group = extent / step.interleave;
  if (group % total != 0)
    return "slice weights (sum " + std::to_string(total) +
           ") do not divide the group extent " + std::to_string(group) +
           " of dimension " + std::to_string(step.dim) + " (extent " +
           std::to_string(extent) + ", interleave " +
           std::to_string(step.interleave) + ")";
  // At most interleave * group = extent: no overflow.
  extent = step.interleave * (group / total) * step.weights[step.chunk];
  return "";
}

/// Checks one step's operands against its kind; returns "" or a problem.
/// The operand indices are in range and every buffer's size is within
/// kMaxBufferBytes (checked before), so dimensions are at most 2^40; the
/// step's own fields still come from the file and are combined with checked
/// arithmetic.
std::string checkStepShapes(const Plan &plan, const Step &step) {
  auto in = [&](size_t i) -> const Buffer & {
    return plan.buffers[step.inputs[i]];
  };
  auto out = [&](size_t i) -> const Buffer & {
    return plan.buffers[step.outputs[i]];
  };
  auto arity = [&](size_t nIn, size_t nOut) -> std::string {
    if (step.inputs.size() != nIn || step.outputs.size() != nOut)
      return "expects " + std::to_string(nIn) + " input(s) and " +
             std::to_string(nOut) + " output(s), has " +
             std::to_string(step.inputs.size()) + " and " +
             std::to_string(step.outputs.size());
    return "";
  };
  auto same = [&](const Buffer &a, const Buffer &b, const char *what) {
    if (a.shape != b.shape)
      return std::string(what) + ": shapes " + shapeText(a.shape) + " and " +
             shapeText(b.shape) + " differ";
    return std::string();
  };
  // Kernels that take one element type for several operands derive every
  // operand's extent from it: a narrower operand would be overrun.
  auto sameType = [&](const Buffer &a, const Buffer &b, const char *what) {
    if (a.type != b.type)
      return std::string(what) + ": element types " + dtypeName(a.type) +
             " and " + dtypeName(b.type) + " differ";
    return std::string();
  };
  std::string e;
  switch (step.kind) {
  case StepKind::Matmul: {
    if (!(e = arity(2, 1)).empty())
      return e;
    const Buffer &a = in(0), &b = in(1), &c = out(0);
    if (a.shape.size() != 2 || b.shape.size() != 2 || c.shape.size() != 2)
      return "matmul operands must be 2-D";
    int64_t m = step.transA ? a.shape[1] : a.shape[0];
    int64_t k = step.transA ? a.shape[0] : a.shape[1];
    int64_t kb = step.transB ? b.shape[1] : b.shape[0];
    int64_t n = step.transB ? b.shape[0] : b.shape[1];
    if (k != kb || c.shape[0] != m || c.shape[1] != n)
      return "matmul shapes " + shapeText(a.shape) + " * " +
             shapeText(b.shape) + " -> " + shapeText(c.shape) +
             " do not agree with the transpose flags";
    if (a.type != b.type)
      return "matmul operands must have one element type";
    return "";
  }
  case StepKind::Attention:
  case StepKind::AttentionGrad: {
    bool grad = step.kind == StepKind::AttentionGrad;
    if (!(e = arity(grad ? 3 : 1, 1)).empty())
      return e;
    if (step.heads < 1 || step.kvHeads < 1 || step.headDim < 1)
      return "heads, kv_heads and head_dim must be >= 1";
    if (step.heads % step.kvHeads != 0)
      return "heads must be a multiple of kv_heads";
    const Buffer &qkv = in(grad ? 1 : 0);
    int64_t qkvCols, outCols;
    if (!checkedMul(step.kvHeads, 2, qkvCols) ||
        !checkedAdd(qkvCols, step.heads, qkvCols) ||
        !checkedMul(qkvCols, step.headDim, qkvCols) ||
        !checkedMul(step.heads, step.headDim, outCols))
      return overflows("(heads + 2 * kv_heads) * head_dim");
    Shape qkvShape{qkv.shape[0], qkvCols};
    if (qkv.shape != qkvShape)
      return "qkv has shape " + shapeText(qkv.shape) + ", expected " +
             shapeText(qkvShape);
    // checkQueries refused `queries` on attention_grad.
    if (step.queries < 0 || step.queries > qkvShape[0])
      return "queries " + std::to_string(step.queries) + " outside [0, " +
             std::to_string(qkvShape[0]) + "] (the rows of qkv)";
    Shape outShape{step.queries > 0 ? step.queries : qkvShape[0], outCols};
    for (int64_t b : step.inputs)
      if (!(e = sameType(plan.buffers[b], qkv, "attention operands")).empty())
        return e;
    if (!(e = sameType(out(0), qkv, "attention result and qkv")).empty())
      return e;
    if (grad) {
      if (in(0).shape != outShape || in(2).shape != outShape)
        return "output gradient and output must have shape " +
               shapeText(outShape);
      return same(out(0), qkv, "qkv gradient and qkv");
    }
    if (out(0).shape != outShape)
      return "output has shape " + shapeText(out(0).shape) + ", expected " +
             shapeText(outShape) +
             (step.queries > 0 ? " (the last " + std::to_string(step.queries) +
                                     " rows of qkv are the queries)"
                               : std::string());
    return "";
  }
  case StepKind::Norm:
  case StepKind::NormGrad: {
    bool grad = step.kind == StepKind::NormGrad;
    if (!(e = arity(grad ? 3 : 2, grad ? 2 : 1)).empty())
      return e;
    const Buffer &x = in(grad ? 1 : 0), &w = in(grad ? 2 : 1);
    if (w.shape != Shape{x.shape.back()})
      return "weight must have one element per column of the input";
    if (grad) {
      if (!(e = same(in(0), x, "output gradient and input")).empty() ||
          !(e = same(out(0), x, "input gradient and input")).empty() ||
          !(e = same(out(1), w, "weight gradient and weight")).empty() ||
          !(e = sameType(in(0), x, "output gradient and input")).empty() ||
          !(e = sameType(out(0), x, "input gradient and input")).empty())
        return e;
      return sameType(out(1), w, "weight gradient and weight");
    }
    if (!(e = same(out(0), x, "result and input")).empty())
      return e;
    return sameType(out(0), x, "result and input");
  }
  case StepKind::Elementwise: {
    bool binary = step.elementwise == ElementwiseKind::Add ||
                  step.elementwise == ElementwiseKind::Mul ||
                  step.elementwise == ElementwiseKind::GeluGrad ||
                  step.elementwise == ElementwiseKind::SwigluGrad;
    if (!(e = arity(binary ? 2 : 1, 1)).empty())
      return e;
    const Buffer &r = out(0);
    Shape half = r.shape, twice = r.shape;
    half.back() /= 2;
    if (!checkedMul(twice.back(), 2, twice.back()))
      return overflows("twice the last dimension");
    switch (step.elementwise) {
    case ElementwiseKind::Swiglu:
      return in(0).shape == twice ? ""
                                  : "swiglu input must be " + shapeText(twice);
    case ElementwiseKind::SwigluGrad:
      if (r.shape.back() % 2 || in(0).shape != half)
        return "swiglu_grad output gradient must be " + shapeText(half);
      return same(in(1), r, "swiglu_grad input and result");
    default:
      if (!(e = same(in(0), r, "input and result")).empty())
        return e;
      if (step.elementwise != ElementwiseKind::Cast && in(0).type != r.type)
        return "only cast may change the element type";
      return binary ? same(in(1), r, "second input and result") : "";
    }
  }
  case StepKind::Opaque:
    if (step.outputs.empty())
      return "opaque steps need at least one output";
    if (step.declaredBytes < 0 || step.declaredBytes > kMaxDeclaredBytes)
      return "declared_bytes " + std::to_string(step.declaredBytes) +
             " is outside [0, kMaxDeclaredBytes = " +
             std::to_string(kMaxDeclaredBytes) + "]";
    return "";
  case StepKind::Slice: {
    if (!(e = arity(1, 1)).empty())
      return e;
    const Buffer &a = in(0), &r = out(0);
    if (step.dim < 0 || step.dim >= static_cast<int64_t>(a.shape.size()) ||
        a.shape.size() != r.shape.size())
      return "slice dimension out of range";
    if (step.chunks < 1 || step.interleave < 1 || step.chunk < 0 ||
        step.chunk >= step.chunks)
      return "slice needs 0 <= chunk < chunks and interleave >= 1, has chunk " +
             std::to_string(step.chunk) + " of " + std::to_string(step.chunks) +
             " interleave " + std::to_string(step.interleave);
    Shape expect = a.shape;
    int64_t &extent = expect[step.dim];
    if (step.weights.empty()) {
      int64_t blocks;
      if (!checkedMul(step.chunks, step.interleave, blocks))
        return overflows("chunks * interleave (" + std::to_string(step.chunks) +
                         " * " + std::to_string(step.interleave) + ")");
      if (extent % blocks != 0)
        return "slice chunk/chunks/interleave do not divide dimension " +
               std::to_string(step.dim);
      extent /= step.chunks;
    } else if (e = checkSliceWeights(step, extent); !e.empty()) {
      return e;
    }
    if (!(e = sameType(a, r, "slice input and result")).empty())
      return e;
    return r.shape == expect ? "" : "slice result must be " + shapeText(expect);
  }
  case StepKind::Concat:
  case StepKind::RingConcat: {
    bool ring = step.kind == StepKind::RingConcat;
    if (step.inputs.empty() || step.outputs.size() != 1)
      return "concat needs inputs and one output";
    if (ring && (step.group < 0 ||
                 step.group >= static_cast<int64_t>(plan.groups.size()) ||
                 static_cast<int64_t>(step.inputs.size()) !=
                     plan.groups[step.group].size))
      return "ring_concat needs a valid group and one input per rank";
    const Buffer &r = out(0);
    if (step.dim < 0 || step.dim >= static_cast<int64_t>(r.shape.size()))
      return "concat dimension out of range";
    Shape expect = in(0).shape;
    if (expect.size() != r.shape.size())
      return "concat inputs and result must have one rank";
    if (!ring && step.interleave < 1)
      return "concat interleave must be >= 1, has " +
             std::to_string(step.interleave);
    // ring_concat: every input has one shape (one rank's block each).
    // concat: the inputs may differ along `dim` (each input's extent there
    // a multiple of interleave); elsewhere they are the result's.
    int64_t total = 0;
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      const Buffer &b = in(k);
      if (ring && b.shape != in(0).shape)
        return "ring_concat inputs must have one shape (input " +
               std::to_string(k) + " is " + shapeText(b.shape) + ", input 0 " +
               shapeText(in(0).shape) + ")";
      if (b.shape.size() != r.shape.size())
        return "concat inputs and result must have one rank";
      for (size_t d = 0; d < r.shape.size(); ++d)
        if (static_cast<int64_t>(d) != step.dim && b.shape[d] != r.shape[d])
          return "concat input " + std::to_string(k) + " has shape " +
                 shapeText(b.shape) + "; outside dimension " +
                 std::to_string(step.dim) +
                 " every input must match the result's " + shapeText(r.shape);
      if (!(e = sameType(b, r, "concat input and result")).empty())
        return e;
      if (!ring && b.shape[step.dim] % step.interleave != 0)
        return "concat interleave " + std::to_string(step.interleave) +
               " does not divide input " + std::to_string(k) + "'s dimension " +
               std::to_string(step.dim) + " (extent " +
               std::to_string(b.shape[step.dim]) + ")";
      if (!checkedAdd(total, b.shape[step.dim], total))
        return overflows("the concatenated dimension");
    }
    expect[step.dim] = total;
    return r.shape == expect ? ""
                             : "concat result must be " + shapeText(expect);
  }
  case StepKind::Collective: {
    if (!(e = arity(1, 1)).empty())
      return e;
    if (step.group < 0 ||
        step.group >= static_cast<int64_t>(plan.groups.size()))
      return "collective group " + std::to_string(step.group) +
             " is not one of the plan's " + std::to_string(plan.groups.size()) +
             " groups";
    if (step.dim != 0)
      return "collectives along dimension " + std::to_string(step.dim) +
             " are not supported by the runtime (only dimension 0, where "
             "ranks' blocks are contiguous)";
    int64_t n = plan.groups[step.group].size;
    const Buffer &a = in(0), &r = out(0);
    if (a.type != r.type || r.shape.size() != a.shape.size())
      return "collective input and result must have one element type and rank";
    Shape expect = a.shape;
    if (step.collective == CollectiveKind::AllGather &&
        !checkedMul(expect[0], n, expect[0]))
      return overflows("all_gather result rows");
    if (step.collective == CollectiveKind::ReduceScatter) {
      if (expect[0] % n)
        return "reduce_scatter input rows must divide by the group size";
      expect[0] /= n;
    }
    if (step.collective == CollectiveKind::AllToAll && expect[0] % n)
      return "all_to_all rows must divide by the group size";
    return r.shape == expect ? ""
                             : "collective result must be " + shapeText(expect);
  }
  case StepKind::Sync:
    return arity(0, 0);
  }
  return "unknown step kind " + std::to_string(static_cast<int>(step.kind));
}

/// A copy-engine transport exists for all_gather, reduce_scatter and permute
/// only (the runtime builds no other), and takes no CTA budget: copy engines
/// hold no SMs. Returns "" or the problem.
std::string checkTransport(const Step &step) {
  if (!step.copyEngine)
    return "";
  bool allowed = step.kind == StepKind::Collective &&
                 (step.collective == CollectiveKind::AllGather ||
                  step.collective == CollectiveKind::ReduceScatter ||
                  step.collective == CollectiveKind::Permute);
  if (!allowed)
    return std::string("transport copy_engine is for all_gather, "
                       "reduce_scatter and permute collectives only, not ") +
           (step.kind == StepKind::Collective
                ? collectiveKindName(step.collective)
                : stepKindName(step.kind));
  if (step.commSms != 0)
    return "transport copy_engine holds no SMs, so it takes no comm_sms "
           "(has " +
           std::to_string(step.commSms) + ")";
  return "";
}

/// Query rows (`queries`) are a field of attention forward steps only: the
/// backward takes every row of qkv as a query. Returns "" or the problem.
std::string checkQueries(const Step &step) {
  if (step.queries == 0 || step.kind == StepKind::Attention)
    return "";
  return "queries applies to attention steps only, not " +
         std::string(stepKindName(step.kind)) + " (has " +
         std::to_string(step.queries) + ")";
}

/// Weights (`weights`) are a field of slice steps only (the reader reads them
/// for no other kind). Returns "" or the problem.
std::string checkWeights(const Step &step) {
  if (step.weights.empty() || step.kind == StepKind::Slice)
    return "";
  return "weights applies to slice steps only, not " +
         std::string(stepKindName(step.kind)) + " (has " +
         std::to_string(step.weights.size()) + ")";
}

/// "<count> <what> exceed kMax<Name> = <bound>" when count > bound.
std::string checkCount(int64_t count, int64_t bound, const char *what,
                       const char *name) {
  if (count <= bound)
    return "";
  return "the plan has " + std::to_string(count) + " " + what + ", more than " +
         name + " = " + std::to_string(bound);
}

/// Counts that size the validator's own tables, checked before any table
/// is allocated.
std::string checkCounts(const Plan &plan) {
  if (plan.formatVersion != kPlanFormatVersion)
    return "format version " + std::to_string(plan.formatVersion) +
           " is not supported";
  if (plan.numStreams < 1)
    return "a plan needs at least one stream";
  std::string e;
  if (!(e = checkCount(plan.numStreams, kMaxPlanStreams, "streams",
                       "kMaxPlanStreams"))
           .empty() ||
      !(e = checkCount(plan.numEvents, kMaxPlanEvents, "events",
                       "kMaxPlanEvents"))
           .empty() ||
      !(e = checkCount(plan.buffers.size(), kMaxPlanBuffers, "buffers",
                       "kMaxPlanBuffers"))
           .empty() ||
      !(e = checkCount(plan.steps.size(), kMaxPlanSteps, "steps",
                       "kMaxPlanSteps"))
           .empty() ||
      !(e = checkCount(plan.groups.size(), kMaxPlanGroups, "groups",
                       "kMaxPlanGroups"))
           .empty())
    return e;
  if (plan.numEvents < 0)
    return "the plan has a negative event count";
  if (plan.arenaBytes < 0)
    return "the plan has a negative arena size";
  for (const Group &g : plan.groups)
    if (g.size < 1 || g.size > kMaxGroupSize)
      return "group '" + g.name + "' has size " + std::to_string(g.size) +
             ", outside [1, kMaxGroupSize = " + std::to_string(kMaxGroupSize) +
             "]";
  return "";
}

/// Shapes, sizes and views of every buffer; "" or the problem.
std::string checkBuffers(const Plan &plan) {
  int64_t numBuffers = plan.buffers.size();
  for (int64_t b = 0; b < numBuffers; ++b) {
    const Buffer &buf = plan.buffers[b];
    std::string where = "buffer " + std::to_string(b) + " ('" + buf.name + "')";
    if (buf.shape.empty())
      return where + " has no shape";
    for (int64_t d : buf.shape)
      if (d < 1)
        return where + " has a non-positive dimension";
    int64_t bytes = buf.bytes();
    if (bytes < 0 || bytes > kMaxBufferBytes)
      return where + " of shape " + shapeText(buf.shape) + " has " +
             (bytes < 0 ? std::string("more than 2^63")
                        : std::to_string(bytes)) +
             " bytes, more than kMaxBufferBytes = " +
             std::to_string(kMaxBufferBytes);
    if (buf.role == Buffer::Role::View) {
      if (buf.viewOf < 0 || buf.viewOf >= numBuffers || buf.viewOf == b)
        return where + " views buffer " + std::to_string(buf.viewOf) +
               ", which does not exist";
      const Buffer &base = plan.buffers[buf.viewOf];
      if (base.role == Buffer::Role::View)
        return where + " views another view; views must name their storage";
      // The base's own size is checked when the loop reaches it; a view of
      // a later, oversized base is caught by the same rangeInside then.
      if (!rangeInside(buf.viewOffset, bytes, base.bytes()))
        return where + " (" + std::to_string(bytes) + " bytes at offset " +
               std::to_string(buf.viewOffset) + ") extends past buffer " +
               std::to_string(buf.viewOf) + " (" +
               std::to_string(base.bytes()) + " bytes)";
    }
  }
  return "";
}

} // namespace

std::string validatePlan(const Plan &plan) {
  if (std::string e = checkCounts(plan); !e.empty())
    return e;
  if (std::string e = checkBuffers(plan); !e.empty())
    return e;
  int64_t numBuffers = plan.buffers.size();
  std::vector<int> inputCount(numBuffers, 0);
  for (int64_t b : plan.inputs) {
    if (b < 0 || b >= numBuffers)
      return "plan input " + std::to_string(b) + " is not a buffer";
    if (plan.buffers[b].role != Buffer::Role::Input)
      return "plan input buffer " + std::to_string(b) +
             " does not have role 'input'";
    if (++inputCount[b] > 1)
      return "buffer " + std::to_string(b) + " is listed twice as an input";
  }
  for (int64_t b = 0; b < numBuffers; ++b)
    if (plan.buffers[b].role == Buffer::Role::Input && !inputCount[b])
      return "buffer " + std::to_string(b) +
             " has role 'input' but is not a plan input";
  for (int64_t b : plan.outputs)
    if (b < 0 || b >= numBuffers)
      return "plan output " + std::to_string(b) + " is not a buffer";

  std::vector<bool> recorded(plan.numEvents, false);
  // Per storage buffer, the byte ranges written so far and by which step
  // (-2: a plan input, written before the step starts). Views write parts
  // of their storage (the blocks of an in-place concat), so a read must be
  // ordered after every write it overlaps, not only the last one.
  struct Write {
    int64_t begin, end, step;
  };
  std::vector<std::vector<Write>> writes(numBuffers);
  auto rangeOf = [&](int64_t b) {
    const Buffer &buf = plan.buffers[b];
    int64_t begin = buf.role == Buffer::Role::View ? buf.viewOffset : 0;
    return std::pair<int64_t, int64_t>(begin, begin + buf.bytes());
  };
  for (int64_t b = 0; b < numBuffers; ++b)
    if (plan.buffers[b].role == Buffer::Role::Input)
      writes[b].push_back({0, plan.buffers[b].bytes(), -2});
  HappensBefore hb(plan);
  std::vector<BufferAccess> accesses;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    std::ostringstream where;
    where << "step " << i << " (" << step.name;
    if (!step.location.empty())
      where << " at " << step.location;
    where << ")";
    if (step.stream < 0 || step.stream >= plan.numStreams)
      return where.str() + " uses stream " + std::to_string(step.stream) +
             " but the plan has " + std::to_string(plan.numStreams);
    for (int64_t e : step.waitEvents) {
      if (e < 0 || e >= plan.numEvents)
        return where.str() + " waits for event " + std::to_string(e) +
               ", outside the plan's " + std::to_string(plan.numEvents);
      if (!recorded[e])
        return where.str() + " waits for event " + std::to_string(e) +
               " before any step records it";
    }
    if (step.recordEvent < -1 || step.recordEvent >= plan.numEvents)
      return where.str() + " records event " +
             std::to_string(step.recordEvent) + ", outside the plan's " +
             std::to_string(plan.numEvents);
    for (int64_t b : step.inputs)
      if (b < 0 || b >= numBuffers)
        return where.str() + " reads buffer " + std::to_string(b) +
               ", which does not exist";
    for (int64_t b : step.outputs) {
      if (b < 0 || b >= numBuffers)
        return where.str() + " writes buffer " + std::to_string(b) +
               ", which does not exist";
      if (plan.buffers[rootBuffer(plan, b)].role == Buffer::Role::Input)
        return where.str() + " writes buffer " + std::to_string(b) +
               ", a plan input (inputs are read-only)";
    }
    if (std::string e = checkTransport(step); !e.empty())
      return where.str() + ": " + e;
    if (std::string e = checkQueries(step); !e.empty())
      return where.str() + ": " + e;
    if (std::string e = checkWeights(step); !e.empty())
      return where.str() + ": " + e;
    if (std::string e = checkStepShapes(plan, step); !e.empty())
      return where.str() + ": " + e;
    // What the executor launches lies inside the step's buffers. Rank 0
    // stands for every rank: ring_concat's blocks are the same set for all.
    std::string accessError;
    if (!stepAccesses(plan, step, 0, accesses, accessError))
      return where.str() + ": " + accessError;
    for (const BufferAccess &a : accesses)
      if (std::string e = checkAccess(plan, a); !e.empty())
        return where.str() + " " + e;
    // Every read must be ordered after the writes that produced the data.
    for (int64_t b : step.inputs) {
      auto [begin, end] = rangeOf(b);
      bool written = false;
      for (const Write &w : writes[rootBuffer(plan, b)]) {
        if (w.end <= begin || end <= w.begin)
          continue;
        written = true;
        if (w.step >= 0 && !hb.before(w.step, i))
          return where.str() + " reads buffer " + std::to_string(b) + " ('" +
                 plan.buffers[b].name + "') written by step " +
                 std::to_string(w.step) +
                 " on another stream with no event ordering the two";
      }
      if (!written)
        return where.str() + " reads buffer " + std::to_string(b) + " ('" +
               plan.buffers[b].name + "') before any step writes it";
    }
    for (int64_t b : step.outputs) {
      auto [begin, end] = rangeOf(b);
      std::vector<Write> &list = writes[rootBuffer(plan, b)];
      list.erase(std::remove_if(list.begin(), list.end(),
                                [&](const Write &w) {
                                  return begin <= w.begin && w.end <= end;
                                }),
                 list.end());
      list.push_back({begin, end, int64_t(i)});
    }
    if (step.recordEvent >= 0)
      recorded[step.recordEvent] = true;
  }
  for (int64_t b : plan.outputs)
    if (writes[rootBuffer(plan, b)].empty())
      return "plan output buffer " + std::to_string(b) + " ('" +
             plan.buffers[b].name + "') is never written";
  // The arena is allocated as stated when the plan is planned, and also when
  // it has no temporaries (nothing to plan): it may not exceed what the
  // temporaries need without any reuse.
  int64_t unshared;
  if (!arenaUpperBound(plan, unshared))
    return overflows("the sum of the temporary buffers' sizes");
  if (plan.arenaBytes > unshared)
    return "arena_bytes " + std::to_string(plan.arenaBytes) + " exceeds the " +
           std::to_string(unshared) +
           " bytes all temporary buffers take without any reuse";
  bool planned = false;
  for (const Buffer &b : plan.buffers)
    planned |= b.role == Buffer::Role::Temp && b.arenaOffset >= 0;
  if (planned)
    if (std::string e = checkMemoryPlan(plan); !e.empty())
      return "memory plan: " + e;
  return "";
}

} // namespace runtime
} // namespace tandem
