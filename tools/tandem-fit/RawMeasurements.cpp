//===- RawMeasurements.cpp - tandem-calibrate's raw.json, read ------------===//

#include "RawMeasurements.h"
#include "tandem/Analysis/JsonInput.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <functional>

using namespace mlir::tandem::fit;
namespace json = llvm::json;

namespace {

/// Reads the fields of one JSON object; the first failure sets `error`
/// to "<where>: "<key>" must be ..." and every later read is skipped.
class FieldReader {
public:
  FieldReader(const json::Object &obj, std::string where, std::string &error)
      : obj(obj), where(std::move(where)), error(error) {}

  /// An integer in [min, max].
  FieldReader &integer(llvm::StringRef key, int64_t &out, int64_t min,
                       int64_t max = INT64_MAX) {
    if (!error.empty())
      return *this;
    std::optional<int64_t> v = obj.getInteger(key);
    if (!v || *v < min || *v > max) {
      error = where + ": \"" + key.str() + "\" must be an integer ";
      error += max == INT64_MAX
                   ? (">= " + llvm::Twine(min)).str()
                   : ("in [" + llvm::Twine(min) + ", " + llvm::Twine(max) + "]")
                         .str();
      return *this;
    }
    out = *v;
    return *this;
  }

  /// A finite number > 0 (a time).
  FieldReader &positive(llvm::StringRef key, double &out) {
    if (!error.empty())
      return *this;
    std::optional<double> v = obj.getNumber(key);
    if (!v || !std::isfinite(*v) || !(*v > 0.0)) {
      error = where + ": \"" + key.str() + "\" must be a positive number";
      return *this;
    }
    out = *v;
    return *this;
  }

  bool ok() const { return error.empty(); }

private:
  const json::Object &obj;
  std::string where;
  std::string &error;
};

/// Calls `row` on every object of array `key`; fails if it is absent (when
/// `required`), empty (when `required`), not an array or holds a
/// non-object.
bool forEachRow(
    const json::Object &root, llvm::StringRef key, llvm::StringRef origin,
    bool required, std::string &error,
    const std::function<void(const json::Object &, const std::string &)> &row) {
  const json::Value *value = root.get(key);
  if (!value && !required)
    return true;
  const json::Array *rows = value ? value->getAsArray() : nullptr;
  if (!rows || (required && rows->empty())) {
    error = (origin + ": \"" + key + "\" must be " +
             (required ? "a non-empty array" : "an array"))
                .str();
    return false;
  }
  for (size_t i = 0; i < rows->size(); ++i) {
    std::string where =
        (origin + ": " + key + "[" + llvm::Twine(i) + "]").str();
    const json::Object *obj = (*rows)[i].getAsObject();
    if (!obj) {
      error = where + " must be an object";
      return false;
    }
    row(*obj, where);
    if (!error.empty())
      return false;
  }
  return true;
}

} // namespace

std::optional<RawMeasurements> RawMeasurements::parse(llvm::StringRef text,
                                                      llvm::StringRef origin,
                                                      std::string &error) {
  error.clear();
  std::optional<json::Value> parsed =
      parseJsonObjectInput(text, origin, "measurement file", error, 1);
  if (!parsed)
    return std::nullopt;
  const json::Object *root = parsed->getAsObject();
  RawMeasurements raw;
  const json::Object *device = root->getObject("device");
  if (!device) {
    error = (origin + ": \"device\" must be an object").str();
    return std::nullopt;
  }
  std::optional<llvm::StringRef> name = device->getString("name");
  if (!name) {
    error = (origin + ": device: \"name\" must be a string").str();
    return std::nullopt;
  }
  raw.deviceName = name->str();
  if (const json::Value *comm = root->get("comm_kernel")) {
    std::optional<llvm::StringRef> kind = comm->getAsString();
    if (!kind || (*kind != "standin" && *kind != "emulated")) {
      error = (origin + ": \"comm_kernel\" must be \"standin\" or "
                        "\"emulated\"")
                  .str();
      return std::nullopt;
    }
    raw.emulatedComm = *kind == "emulated";
  }
  std::string deviceWhere = (origin + ": device").str();
  if (!FieldReader(*device, deviceWhere, error)
           .integer("sms", raw.deviceSms, 2)
           .ok())
    return std::nullopt;
  const int64_t sms = raw.deviceSms;

  if (const json::Value *launch = root->get("launch")) {
    const json::Object *obj = launch->getAsObject();
    if (!obj) {
      error = (origin + ": \"launch\" must be an object").str();
      return std::nullopt;
    }
    LaunchSample l;
    if (!FieldReader(*obj, (origin + ": launch").str(), error)
             .integer("kernels", l.kernels, 1)
             .positive("us", l.us)
             .ok())
      return std::nullopt;
    raw.launch = l;
  }

  if (const json::Value *latency = root->get("event_latency")) {
    const json::Object *obj = latency->getAsObject();
    std::optional<double> perGate =
        obj ? obj->getNumber("per_gate_us") : std::nullopt;
    if (!perGate || !(*perGate >= 0.0 && *perGate <= 1e6)) {
      error = (origin + ": \"event_latency\" must be an object with "
                        "\"per_gate_us\" in [0, 1e6]")
                  .str();
      return std::nullopt;
    }
    raw.eventLatencyUs = *perGate;
  }

  if (const json::Value *latency = root->get("copy_engine_latency")) {
    const json::Object *obj = latency->getAsObject();
    std::optional<double> us = obj ? obj->getNumber("us") : std::nullopt;
    if (!us || !(*us > 0.0 && *us <= 1e6)) {
      error = (origin + ": \"copy_engine_latency\" must be an object with "
                        "\"us\" in (0, 1e6]")
                  .str();
      return std::nullopt;
    }
    raw.copyEngineLatencyUs = *us;
  }

  bool ok =
      forEachRow(*root, "hbm", origin, false, error,
                 [&](const json::Object &obj, const std::string &where) {
                   HbmSample s;
                   if (FieldReader(obj, where, error)
                           .integer("bytes", s.bytes, 1)
                           .positive("us", s.us)
                           .ok())
                     raw.hbm.push_back(s);
                 }) &&
      forEachRow(*root, "gemm", origin, true, error,
                 [&](const json::Object &obj, const std::string &where) {
                   GemmSample s;
                   if (FieldReader(obj, where, error)
                           .integer("m", s.m, 1)
                           .integer("n", s.n, 1)
                           .integer("k", s.k, 1)
                           .integer("sm_target", s.smTarget, 0, sms)
                           .positive("us", s.us)
                           .ok())
                     raw.gemm.push_back(s);
                 }) &&
      forEachRow(*root, "standalone_copy", origin, false, error,
                 [&](const json::Object &obj, const std::string &where) {
                   CopySample s;
                   if (FieldReader(obj, where, error)
                           .integer("ctas", s.ctas, 1, sms - 1)
                           .integer("bytes", s.bytes, 1)
                           .positive("us", s.us)
                           .ok())
                     raw.standaloneCopy.push_back(s);
                 }) &&
      forEachRow(*root, "pairs", origin, true, error,
                 [&](const json::Object &obj, const std::string &where) {
                   GemmPair p;
                   if (FieldReader(obj, where, error)
                           .integer("m", p.m, 1)
                           .integer("n", p.n, 1)
                           .integer("k", p.k, 1)
                           .integer("gemm_count", p.gemmCount, 1)
                           .integer("gemm_sm_target", p.gemmSmTarget, 0, sms)
                           .integer("comm_ctas", p.commCtas, 1, sms - 1)
                           .integer("bytes", p.bytes, 1)
                           .positive("gemm_alone_us", p.gemmAloneUs)
                           .positive("copy_alone_us", p.copyAloneUs)
                           .positive("gemm_overlapped_us", p.gemmOverlappedUs)
                           .positive("copy_overlapped_us", p.copyOverlappedUs)
                           .positive("span_us", p.spanUs)
                           .positive("serial_us", p.serialUs)
                           .ok())
                     raw.pairs.push_back(p);
                 }) &&
      forEachRow(*root, "memory_pairs", origin, false, error,
                 [&](const json::Object &obj, const std::string &where) {
                   MemoryPair p;
                   if (FieldReader(obj, where, error)
                           .integer("comm_ctas", p.commCtas, 1, sms - 1)
                           .integer("bytes", p.bytes, 1)
                           .integer("mem_bytes", p.memBytes, 1)
                           .integer("mem_count", p.memCount, 1)
                           .positive("mem_alone_us", p.memAloneUs)
                           .positive("copy_alone_us", p.copyAloneUs)
                           .positive("mem_overlapped_us", p.memOverlappedUs)
                           .positive("copy_overlapped_us", p.copyOverlappedUs)
                           .positive("span_us", p.spanUs)
                           .positive("serial_us", p.serialUs)
                           .ok())
                     raw.memoryPairs.push_back(p);
                 }) &&
      forEachRow(
          *root, "copy_engine_pairs", origin, false, error,
          [&](const json::Object &obj, const std::string &where) {
            CopyEnginePair p;
            std::optional<llvm::StringRef> side = obj.getString("side");
            if (!side || (*side != "gemm" && *side != "memory")) {
              error = where + ": \"side\" must be \"gemm\" or \"memory\"";
              return;
            }
            p.gemmSide = *side == "gemm";
            // tandem-calibrate also measures GEMMs sized for all SMs but
            // one (gemm_sm_target S-1); the point is fitted on GEMMs sized
            // for every SM, as the engine runs a GEMM beside copies.
            if (std::optional<int64_t> target =
                    obj.getInteger("gemm_sm_target");
                target && *target != 0)
              return;
            FieldReader r(obj, where, error);
            if (p.gemmSide)
              r.integer("m", p.m, 1).integer("n", p.n, 1).integer("k", p.k, 1);
            else
              r.integer("mem_bytes", p.memBytes, 1);
            if (r.integer("bytes", p.bytes, 1)
                    .positive("compute_alone_us", p.computeAloneUs)
                    .positive("ce_alone_us", p.ceAloneUs)
                    .positive("compute_overlapped_us", p.computeOverlappedUs)
                    .positive("ce_overlapped_us", p.ceOverlappedUs)
                    .positive("span_us", p.spanUs)
                    .positive("serial_us", p.serialUs)
                    .ok())
              raw.copyEnginePairs.push_back(p);
          }) &&
      forEachRow(*root, "norm", origin, false, error,
                 [&](const json::Object &obj, const std::string &where) {
                   KernelSample s;
                   std::optional<llvm::StringRef> kind = obj.getString("kind");
                   if (kind && *kind == "norm") {
                     s.kernel = MemoryKernel::norm;
                   } else if (kind && *kind == "norm_grad") {
                     s.kernel = MemoryKernel::normGrad;
                   } else {
                     error = where + ": \"kind\" must be \"norm\" or "
                                     "\"norm_grad\"";
                     return;
                   }
                   int64_t rows = 0, cols = 0;
                   if (FieldReader(obj, where, error)
                           .integer("rows", rows, 1)
                           .integer("cols", cols, 1)
                           .integer("bytes", s.bytes, 1)
                           .positive("us", s.us)
                           .ok()) {
                     s.shape =
                         std::to_string(rows) + " x " + std::to_string(cols);
                     raw.kernels.push_back(s);
                   }
                 }) &&
      forEachRow(*root, "strided_copy", origin, false, error,
                 [&](const json::Object &obj, const std::string &where) {
                   KernelSample s;
                   s.kernel = MemoryKernel::layoutCopy;
                   int64_t rows = 0, rowBytes = 0, srcPitch = 0, dstPitch = 0;
                   if (FieldReader(obj, where, error)
                           .integer("rows", rows, 1)
                           .integer("row_bytes", rowBytes, 1)
                           .integer("src_pitch", srcPitch, 1)
                           .integer("dst_pitch", dstPitch, 1)
                           .integer("bytes", s.bytes, 1)
                           .positive("us", s.us)
                           .ok()) {
                     s.shape = std::to_string(rows) + " x " +
                               std::to_string(rowBytes) + " B (pitches " +
                               std::to_string(srcPitch) + ", " +
                               std::to_string(dstPitch) + ")";
                     raw.kernels.push_back(s);
                   }
                 });
  if (!ok)
    return std::nullopt;
  return raw;
}
