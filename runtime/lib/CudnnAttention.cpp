//===- CudnnAttention.cpp - cuDNN's fused attention as an option ----------===//
//
// The graphs: Q, K and V are strided views of the packed qkv tensor (row i
// holds the queries of every head, then the keys and the values of every kv
// head), as (batch 1, heads, seq, headDim) tensors with row stride
// (heads + 2 kvHeads) * headDim; `out` and `dout` are (1, heads, seq,
// headDim) views of seq x heads * headDim; the statistics (1, heads, seq, 1)
// f32, contiguous. dQ, dK and dV are written straight into the same views of
// dqkv, so nothing is repacked.
//
// A forward with `queries` = N < seq takes Q as the (1, heads, N, headDim)
// view that starts seq - N rows down the packed tensor and K, V as all seq
// rows: cuDNN's separate query and key/value lengths (s_q = N, s_kv = seq),
// with the causal mask's diagonal aligned to the bottom right, so query i
// sees keys 0 .. seq - N + i. `out` and the statistics have N rows. N = seq
// builds the same graph as no `queries` (top-left causal mask, which is the
// same mask on a square). The backward takes no `queries`.
//
// Without TANDEM_HAVE_CUDNN (the build found no cuDNN or no cudnn-frontend)
// only the two queries and create() exist, and create() fails with the
// configure step's reason.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/CudnnAttention.h"

#include <array>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#ifdef TANDEM_HAVE_CUDNN
#include <cudnn_frontend.h>
#endif

namespace tandem {
namespace runtime {

#ifndef TANDEM_CUDNN_REASON
#define TANDEM_CUDNN_REASON "this runtime was built without cuDNN"
#endif

bool cudnnAttentionBuilt(std::string &reason) {
#ifdef TANDEM_HAVE_CUDNN
  reason.clear();
  return true;
#else
  reason = TANDEM_CUDNN_REASON;
  return false;
#endif
}

#ifndef TANDEM_HAVE_CUDNN

int64_t cudnnAttentionLibraryVersion() { return 0; }

struct CudnnAttention::Impl {};

std::unique_ptr<CudnnAttention> CudnnAttention::create(bool,
                                                       std::string &error) {
  error = "cuDNN attention is not available: " TANDEM_CUDNN_REASON
          " (configure with -DTANDEM_CUDNN=ON where cuDNN and cudnn-frontend "
          "are installed, docs/runtime.md)";
  return nullptr;
}

CudnnAttention::CudnnAttention(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
CudnnAttention::~CudnnAttention() = default;

// create() never returns an object in this build, so these are unreachable;
// they still answer with the reason instead of doing nothing.
bool CudnnAttention::prepare(const AttentionArgs &, bool, std::string &reason) {
  reason = TANDEM_CUDNN_REASON;
  return false;
}
int64_t CudnnAttention::workspaceBytes(const AttentionArgs &, bool) const {
  return 0;
}
bool CudnnAttention::forward(const AttentionArgs &, const void *, void *,
                             float *, void *, cudaStream_t,
                             std::string &error) {
  error = TANDEM_CUDNN_REASON;
  return false;
}
bool CudnnAttention::backward(const AttentionArgs &, const void *, const void *,
                              const void *, const float *, void *, void *,
                              cudaStream_t, std::string &error) {
  error = TANDEM_CUDNN_REASON;
  return false;
}

#else // TANDEM_HAVE_CUDNN

namespace fe = cudnn_frontend;

namespace {

// Tensor uids of the variant packs.
enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

/// What a graph is built for: the shape (query rows included), the type
/// and the direction.
using GraphKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool,
                            int, bool, int64_t>;

GraphKey keyOf(const AttentionArgs &a, bool backward) {
  return {a.seq,       a.queryRows(), a.heads,
          a.kvHeads,   a.headDim,     a.causal,
          int(a.type), backward,      backward ? 0 : a.lseRowStride()};
}

std::string describe(const AttentionArgs &a) {
  std::ostringstream os;
  os << (a.causal ? "causal" : "full") << " " << dtypeName(a.type) << " seq "
     << a.seq;
  if (a.queryRows() != a.seq)
    os << " (last " << a.queryRows() << " rows queries)";
  os << ", " << a.heads << " heads / " << a.kvHeads << " kv heads, head dim "
     << a.headDim;
  return os.str();
}

/// (1, heads, seq, headDim) view with the given row stride (elements).
fe::graph::Tensor_attributes view(const char *name, int64_t uid, int64_t heads,
                                  int64_t seq, int64_t headDim,
                                  int64_t rowStride) {
  return fe::graph::Tensor_attributes()
      .set_name(name)
      .set_uid(uid)
      .set_dim({1, heads, seq, headDim})
      .set_stride({seq * rowStride, headDim, rowStride, 1});
}

fe::graph::Tensor_attributes stats(int64_t heads, int64_t seq) {
  return fe::graph::Tensor_attributes()
      .set_name("lse")
      .set_uid(kStats)
      .set_dim({1, heads, seq, 1})
      .set_stride({heads * seq, seq, 1, 1})
      .set_data_type(fe::DataType_t::FLOAT);
}

} // namespace

int64_t cudnnAttentionLibraryVersion() {
  return static_cast<int64_t>(cudnnGetVersion());
}

struct CudnnAttention::Impl {
  cudnnHandle_t handle = nullptr;
  bool deterministic = true;
  struct Built {
    std::shared_ptr<fe::graph::Graph> graph;
    int64_t workspace = 0;
  };
  std::map<GraphKey, Built> graphs;
  /// Shapes cuDNN refused, with its reason (asked once).
  std::map<GraphKey, std::string> refused;

  ~Impl() {
    graphs.clear();
    if (handle)
      cudnnDestroy(handle);
  }

  std::shared_ptr<fe::graph::Graph> build(const AttentionArgs &a, bool backward,
                                          std::string &reason);
  bool execute(const AttentionArgs &a, bool backward,
               std::unordered_map<int64_t, void *> &pack, void *workspace,
               cudaStream_t stream, std::string &error);
};

std::shared_ptr<fe::graph::Graph>
CudnnAttention::Impl::build(const AttentionArgs &a, bool backward,
                            std::string &reason) {
  if (a.type != DType::BF16 && a.type != DType::F16) {
    reason = std::string("cuDNN attention takes bf16 or f16, not ") +
             dtypeName(a.type);
    return nullptr;
  }
  if (a.headDim <= 0 || a.headDim % 8 != 0 || a.headDim > 256) {
    reason = "cuDNN attention needs a head dim that is a multiple of 8 up to "
             "256, not " +
             std::to_string(a.headDim);
    return nullptr;
  }
  if (a.seq <= 0 || a.heads <= 0 || a.kvHeads <= 0 || a.heads % a.kvHeads ||
      a.queries < 0 || a.queries > a.seq) {
    reason = "bad attention shape (" + describe(a) + ")";
    return nullptr;
  }
  if (backward && a.queries != 0) {
    reason = "queries " + std::to_string(a.queries) +
             " applies to the attention forward only (the backward takes "
             "every row of qkv as a query)";
    return nullptr;
  }
  auto graph = std::make_shared<fe::graph::Graph>();
  graph
      ->set_io_data_type(a.type == DType::BF16 ? fe::DataType_t::BFLOAT16
                                               : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  int64_t row = (a.heads + 2 * a.kvHeads) * a.headDim;
  int64_t outRow = a.heads * a.headDim;
  float scale = 1.0f / std::sqrt(static_cast<float>(a.headDim));
  int64_t rows = a.queryRows();
  auto q = graph->tensor(view("q", kQ, a.heads, rows, a.headDim, row));
  auto k = graph->tensor(view("k", kK, a.kvHeads, a.seq, a.headDim, row));
  auto v = graph->tensor(view("v", kV, a.kvHeads, a.seq, a.headDim, row));
  if (!backward) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("tandem_attention")
                       .set_generate_stats(true)
                       .set_attn_scale(scale);
    // The last `rows` positions are the queries: with fewer queries than
    // keys the causal diagonal is the score matrix's bottom-right one.
    if (a.causal && rows < a.seq)
      options.set_diagonal_alignment(fe::DiagonalAlignment_t::BOTTOM_RIGHT)
          .set_diagonal_band_right_bound(0);
    else
      options.set_causal_mask(a.causal);
    auto [o, lse] = graph->sdpa(q, k, v, options);
    o->set_output(true)
        .set_uid(kO)
        .set_dim({1, a.heads, rows, a.headDim})
        .set_stride({rows * outRow, a.headDim, outRow, 1});
    // The statistics of head h start at h * lseRowStride(): a causal
    // segment writes its rows into those of the whole sequence.
    int64_t ld = a.lseRowStride();
    lse->set_output(true)
        .set_uid(kStats)
        .set_dim({1, a.heads, rows, 1})
        .set_stride({a.heads * ld, ld, 1, 1})
        .set_data_type(fe::DataType_t::FLOAT);
  } else {
    auto o = graph->tensor(view("out", kO, a.heads, a.seq, a.headDim, outRow));
    auto dO =
        graph->tensor(view("dout", kDO, a.heads, a.seq, a.headDim, outRow));
    auto lse = graph->tensor(stats(a.heads, a.seq));
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("tandem_attention_grad")
                       .set_attn_scale(scale)
                       .set_causal_mask(a.causal)
                       .set_deterministic_algorithm(deterministic);
    auto [dQ, dK, dV] = graph->sdpa_backward(q, k, v, o, dO, lse, options);
    dQ->set_output(true)
        .set_uid(kDQ)
        .set_dim({1, a.heads, a.seq, a.headDim})
        .set_stride({a.seq * row, a.headDim, row, 1});
    dK->set_output(true)
        .set_uid(kDK)
        .set_dim({1, a.kvHeads, a.seq, a.headDim})
        .set_stride({a.seq * row, a.headDim, row, 1});
    dV->set_output(true)
        .set_uid(kDV)
        .set_dim({1, a.kvHeads, a.seq, a.headDim})
        .set_stride({a.seq * row, a.headDim, row, 1});
  }
  fe::error_t status = graph->build(handle, {fe::HeurMode_t::A});
  if (!status.is_good()) {
    reason = std::string("cuDNN has no ") +
             (backward ? "backward" : "forward") + " engine for " +
             describe(a) +
             (deterministic && backward ? " (deterministic)" : "") + ": " +
             status.get_message();
    return nullptr;
  }
  return graph;
}

bool CudnnAttention::Impl::execute(const AttentionArgs &a, bool backward,
                                   std::unordered_map<int64_t, void *> &pack,
                                   void *workspace, cudaStream_t stream,
                                   std::string &error) {
  auto it = graphs.find(keyOf(a, backward));
  if (it == graphs.end()) {
    error = std::string("cuDNN attention ") +
            (backward ? "backward" : "forward") + " for " + describe(a) +
            " was not prepared";
    return false;
  }
  cudnnStatus_t s = cudnnSetStream(handle, stream);
  if (s != CUDNN_STATUS_SUCCESS) {
    error = std::string("cudnnSetStream: ") + cudnnGetErrorString(s);
    return false;
  }
  fe::error_t status = it->second.graph->execute(handle, pack, workspace);
  if (!status.is_good()) {
    error = std::string("cuDNN attention ") +
            (backward ? "backward" : "forward") + " (" + describe(a) +
            "): " + status.get_message();
    return false;
  }
  return true;
}

std::unique_ptr<CudnnAttention> CudnnAttention::create(bool deterministic,
                                                       std::string &error) {
  auto impl = std::make_unique<Impl>();
  impl->deterministic = deterministic;
  cudnnStatus_t s = cudnnCreate(&impl->handle);
  if (s != CUDNN_STATUS_SUCCESS) {
    impl->handle = nullptr;
    error = std::string("cudnnCreate: ") + cudnnGetErrorString(s);
    return nullptr;
  }
  return std::unique_ptr<CudnnAttention>(new CudnnAttention(std::move(impl)));
}

CudnnAttention::CudnnAttention(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
CudnnAttention::~CudnnAttention() = default;

bool CudnnAttention::prepare(const AttentionArgs &args, bool backward,
                             std::string &reason) {
  GraphKey key = keyOf(args, backward);
  if (impl->graphs.count(key))
    return true;
  if (auto r = impl->refused.find(key); r != impl->refused.end()) {
    reason = r->second;
    return false;
  }
  std::shared_ptr<fe::graph::Graph> graph = impl->build(args, backward, reason);
  if (!graph) {
    impl->refused[key] = reason;
    return false;
  }
  int64_t workspace = 0;
  fe::error_t status = graph->get_workspace_size(workspace);
  if (!status.is_good()) {
    reason = "cuDNN workspace size: " + status.get_message();
    impl->refused[key] = reason;
    return false;
  }
  impl->graphs[key] = {graph, workspace};
  return true;
}

int64_t CudnnAttention::workspaceBytes(const AttentionArgs &args,
                                       bool backward) const {
  auto it = impl->graphs.find(keyOf(args, backward));
  return it == impl->graphs.end() ? 0 : it->second.workspace;
}

/// Q, K and V of the packed layout: views at these pointers (the queries
/// of every head, then the keys, then the values of every kv head).
static std::array<char *, 3> qkvViews(const AttentionArgs &args,
                                      const void *packed) {
  char *base = static_cast<char *>(const_cast<void *>(packed));
  int64_t column = args.headDim * dtypeBytes(args.type);
  return {base, base + args.heads * column,
          base + (args.heads + args.kvHeads) * column};
}

bool CudnnAttention::forward(const AttentionArgs &args, const void *qkv,
                             void *out, float *lse, void *workspace,
                             cudaStream_t stream, std::string &error) {
  auto [q, k, v] = qkvViews(args, qkv);
  // The queries are the last queryRows() rows.
  q += (args.seq - args.queryRows()) * (args.heads + 2 * args.kvHeads) *
       args.headDim * dtypeBytes(args.type);
  std::unordered_map<int64_t, void *> pack = {
      {kQ, q}, {kK, k}, {kV, v}, {kO, out}, {kStats, lse}};
  return impl->execute(args, false, pack, workspace, stream, error);
}

bool CudnnAttention::backward(const AttentionArgs &args, const void *dout,
                              const void *qkv, const void *out,
                              const float *lse, void *dqkv, void *workspace,
                              cudaStream_t stream, std::string &error) {
  auto [q, k, v] = qkvViews(args, qkv);
  auto [dq, dk, dv] = qkvViews(args, dqkv);
  std::unordered_map<int64_t, void *> pack = {
      {kQ, q},
      {kK, k},
      {kV, v},
      {kO, const_cast<void *>(out)},
      {kDO, const_cast<void *>(dout)},
      {kStats, const_cast<float *>(lse)},
      {kDQ, dq},
      {kDK, dk},
      {kDV, dv}};
  return impl->execute(args, true, pack, workspace, stream, error);
}

#endif // TANDEM_HAVE_CUDNN

} // namespace runtime
} // namespace tandem
