//===- TandemAttributes.cpp - Enums and the target attribute --------------===//
//
// The target attribute's presets, its parser (preset name plus overrides) and
// printer (only what differs from the preset). docs/cost-model.md gives the
// source of every preset value; keep the two in step.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Dialect/Tandem/TandemOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <variant>

using namespace mlir;
using namespace mlir::tandem;

#include "tandem/Dialect/Tandem/TandemEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tandem/Dialect/Tandem/TandemAttributes.cpp.inc"

void TandemDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tandem/Dialect/Tandem/TandemAttributes.cpp.inc"
      >();
}

namespace {
/// The numeric fields of a target, in the order of the attribute's
/// parameters.
struct TargetValues {
  int64_t smCount = 0;
  double bf16Tflops = 0, f16Tflops = 0, fp8Tflops = 0, f32Tflops = 0;
  double hbmGbps = 0;
  int64_t hbmBytes = 0;
  double gemmEfficiency = 0, hbmEfficiency = 0;
  int64_t collectiveSms = 0, gemmTileM = 0, gemmTileN = 0;
  double launchOverheadUs = 0;
};

struct TargetField {
  StringRef key;
  std::variant<int64_t TargetValues::*, double TargetValues::*> member;
};

const TargetField kTargetFields[] = {
    {"sm_count", &TargetValues::smCount},
    {"bf16_tflops", &TargetValues::bf16Tflops},
    {"f16_tflops", &TargetValues::f16Tflops},
    {"fp8_tflops", &TargetValues::fp8Tflops},
    {"f32_tflops", &TargetValues::f32Tflops},
    {"hbm_gbps", &TargetValues::hbmGbps},
    {"hbm_bytes", &TargetValues::hbmBytes},
    {"gemm_efficiency", &TargetValues::gemmEfficiency},
    {"hbm_efficiency", &TargetValues::hbmEfficiency},
    {"collective_sms", &TargetValues::collectiveSms},
    {"gemm_tile_m", &TargetValues::gemmTileM},
    {"gemm_tile_n", &TargetValues::gemmTileN},
    {"launch_overhead_us", &TargetValues::launchOverheadUs},
};

struct Preset {
  StringRef name;
  TargetValues values;
};

// Sources (docs/cost-model.md has the full table):
//  - SM counts, dense tensor-core peaks, HBM bandwidth: vendor datasheets
//    (H100 SXM5, H200 SXM, MI300X); f32 means TF32 tensor-core peak.
//  - h200 hbm_bytes: 143771 MiB as nvidia-smi reports it on the lent H200.
//  - gemm_efficiency 0.80: 790 TFLOP/s measured for an 8192^3 bf16 GEMM on
//    random data on the lent H200 (device KINDS.md) / 989 datasheet peak.
//  - hbm_efficiency 0.90: device-to-device copy measured at 4.3 TB/s on the
//    lent H200 / 4.8 TB/s datasheet.
//  - collective_sms 24: the footprint used in shared/data/h200-probe.md and
//    the seed document's example; the SM-target pass chooses per collective.
//  - gemm tile 128x256: assumed cuBLASLt Hopper bf16 tile; it predicts the
//    probe's 1.19x slowdown at 108 SMs (measured 1.22x).
//  - launch_overhead_us 4: assumed, to be calibrated by the runtime issue.
// h100 and mi300x reuse the H200's measured efficiencies: not measured there.
const Preset kPresets[] = {
    {"h100",
     {132, 989.4, 989.4, 1978.9, 494.7, 3350.0, 80LL << 30, 0.80, 0.90, 24,
      128, 256, 4.0}},
    {"h200",
     {132, 989.4, 989.4, 1978.9, 494.7, 4800.0, 143771LL << 20, 0.80, 0.90,
      24, 128, 256, 4.0}},
    {"mi300x",
     {304, 1307.4, 1307.4, 2614.9, 653.7, 5300.0, 192LL << 30, 0.80, 0.90, 24,
      128, 256, 4.0}},
};

const Preset *findPreset(StringRef name) {
  for (const Preset &p : kPresets)
    if (p.name == name)
      return &p;
  return nullptr;
}

TargetValues valuesOf(TargetAttr attr) {
  TargetValues v;
  v.smCount = attr.getSmCount();
  v.bf16Tflops = attr.getBf16Tflops().convertToDouble();
  v.f16Tflops = attr.getF16Tflops().convertToDouble();
  v.fp8Tflops = attr.getFp8Tflops().convertToDouble();
  v.f32Tflops = attr.getF32Tflops().convertToDouble();
  v.hbmGbps = attr.getHbmGbps().convertToDouble();
  v.hbmBytes = attr.getHbmBytes();
  v.gemmEfficiency = attr.getGemmEfficiency().convertToDouble();
  v.hbmEfficiency = attr.getHbmEfficiency().convertToDouble();
  v.collectiveSms = attr.getCollectiveSms();
  v.gemmTileM = attr.getGemmTileM();
  v.gemmTileN = attr.getGemmTileN();
  v.launchOverheadUs = attr.getLaunchOverheadUs().convertToDouble();
  return v;
}

TargetAttr buildTarget(function_ref<InFlightDiagnostic()> emitError,
                       MLIRContext *ctx, StringRef name,
                       const TargetValues &v) {
  auto build = [&](auto &&getter) {
    return getter(ctx, name, v.smCount, APFloat(v.bf16Tflops),
                  APFloat(v.f16Tflops), APFloat(v.fp8Tflops),
                  APFloat(v.f32Tflops), APFloat(v.hbmGbps), v.hbmBytes,
                  APFloat(v.gemmEfficiency), APFloat(v.hbmEfficiency),
                  v.collectiveSms, v.gemmTileM, v.gemmTileN,
                  APFloat(v.launchOverheadUs));
  };
  if (emitError)
    return build([&](auto... args) {
      return TargetAttr::getChecked(emitError, args...);
    });
  return build([](auto... args) { return TargetAttr::get(args...); });
}
} // namespace

TargetAttr TargetAttr::getPreset(MLIRContext *ctx, StringRef name) {
  const Preset *preset = findPreset(name);
  if (!preset)
    return {};
  return buildTarget(nullptr, ctx, preset->name, preset->values);
}

ArrayRef<StringRef> TargetAttr::getPresetNames() {
  static const SmallVector<StringRef> names = llvm::map_to_vector(
      kPresets, [](const Preset &p) { return p.name; });
  return names;
}

LogicalResult
TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   StringRef name, int64_t smCount, APFloat bf16Tflops,
                   APFloat f16Tflops, APFloat fp8Tflops, APFloat f32Tflops,
                   APFloat hbmGbps, int64_t hbmBytes, APFloat gemmEfficiency,
                   APFloat hbmEfficiency, int64_t collectiveSms,
                   int64_t gemmTileM, int64_t gemmTileN,
                   APFloat launchOverheadUs) {
  if (name.empty())
    return emitError() << "target name must not be empty";
  if (smCount <= 0 || smCount > kMaxSmCount)
    return emitError() << "target '" << name << "': sm_count must be in [1, "
                       << kMaxSmCount << "], got " << smCount;
  for (auto [key, value] :
       {std::pair<StringRef, double>{"bf16_tflops",
                                     bf16Tflops.convertToDouble()},
        {"f16_tflops", f16Tflops.convertToDouble()},
        {"fp8_tflops", fp8Tflops.convertToDouble()},
        {"f32_tflops", f32Tflops.convertToDouble()},
        {"hbm_gbps", hbmGbps.convertToDouble()}})
    // A rate outside these bounds would make a time 0 or infinite (NaN
    // fails both comparisons).
    if (!(value >= kMinRate && value <= kMaxRate))
      return emitError() << "target '" << name << "': " << key
                         << " must be in [" << kMinRate << ", " << kMaxRate
                         << "], got " << value;
  if (hbmBytes <= 0)
    return emitError() << "target '" << name
                       << "': hbm_bytes must be positive";
  for (auto [key, value] :
       {std::pair<StringRef, double>{"gemm_efficiency",
                                     gemmEfficiency.convertToDouble()},
        {"hbm_efficiency", hbmEfficiency.convertToDouble()}})
    if (!(value >= kMinEfficiency && value <= 1.0))
      return emitError() << "target '" << name << "': " << key
                         << " must be in [" << kMinEfficiency << ", 1], got "
                         << value;
  if (collectiveSms < 1 || collectiveSms >= smCount)
    return emitError() << "target '" << name
                       << "': collective_sms must be in [1, sm_count), got "
                       << collectiveSms;
  if (gemmTileM <= 0 || gemmTileN <= 0 || gemmTileM > kMaxGemmTile ||
      gemmTileN > kMaxGemmTile)
    return emitError() << "target '" << name
                       << "': gemm tile sizes must be in [1, " << kMaxGemmTile
                       << "], got " << gemmTileM << "x" << gemmTileN;
  double launch = launchOverheadUs.convertToDouble();
  if (!(launch >= 0.0 && launch <= kMaxLatencyUs))
    return emitError() << "target '" << name
                       << "': launch_overhead_us must be in [0, "
                       << kMaxLatencyUs << "], got " << launch;
  return success();
}

Attribute TargetAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc nameLoc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseLess() || parser.parseString(&name))
    return {};

  const Preset *preset = findPreset(name);
  TargetValues values = preset ? preset->values : TargetValues();
  llvm::StringSet<> given;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    const TargetField *field = llvm::find_if(
        kTargetFields, [&](const TargetField &f) { return f.key == key; });
    if (field == std::end(kTargetFields)) {
      auto diag = parser.emitError(keyLoc)
                  << "unknown target field '" << key << "'; expected one of ";
      llvm::interleaveComma(kTargetFields, diag,
                            [&](const TargetField &f) { diag << f.key; });
      return {};
    }
    if (!given.insert(key).second) {
      parser.emitError(keyLoc) << "target field '" << key << "' given twice";
      return {};
    }
    if (auto *intMember = std::get_if<int64_t TargetValues::*>(&field->member)) {
      if (parser.parseInteger(values.*(*intMember)))
        return {};
    } else {
      auto member = std::get<double TargetValues::*>(field->member);
      if (parser.parseFloat(values.*member))
        return {};
    }
  }
  if (parser.parseGreater())
    return {};

  if (!preset) {
    SmallVector<StringRef> missing;
    for (const TargetField &f : kTargetFields)
      if (!given.contains(f.key))
        missing.push_back(f.key);
    if (!missing.empty()) {
      auto diag = parser.emitError(nameLoc)
                  << "target '" << name << "' is not a preset (";
      llvm::interleaveComma(getPresetNames(), diag);
      diag << ") and lacks fields: ";
      llvm::interleaveComma(missing, diag);
      return {};
    }
  }
  return buildTarget([&] { return parser.emitError(nameLoc); }, ctx, name,
                     values);
}

void TargetAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printString(getName());
  const Preset *preset = findPreset(getName());
  TargetValues mine = valuesOf(*this);
  for (const TargetField &f : kTargetFields) {
    if (auto *intMember = std::get_if<int64_t TargetValues::*>(&f.member)) {
      if (preset && preset->values.*(*intMember) == mine.*(*intMember))
        continue;
      printer << ", " << f.key << " = " << mine.*(*intMember);
    } else {
      auto member = std::get<double TargetValues::*>(f.member);
      if (preset && preset->values.*member == mine.*member)
        continue;
      printer << ", " << f.key << " = " << mine.*member;
    }
  }
  printer << ">";
}
