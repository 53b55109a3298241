//===- tandem-diagnose.cpp - Broken overlap in a measured step ------------===//
//
// Compares a measured step (tandem-run --trace, or any trace in the
// simulator's layout) with its expected timeline (the simulator's trace, a
// plan's prediction, or a clean run) and reports lost expected overlap with
// its cause and harmful overlap (docs/diagnosis.md). With --kineto it reads
// a PyTorch profiler trace instead. A thin driver over TandemDiagnosis.
//
//===----------------------------------------------------------------------===//

#include "tandem/Diagnosis/Diagnose.h"
#include "tandem/Diagnosis/Kineto.h"
#include "tandem/Diagnosis/NoiseFloor.h"
#include "tandem/Diagnosis/Report.h"
#include "tandem/Diagnosis/Timeline.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace tandem::diagnosis;

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

void printHelp(std::FILE *out) {
  std::fputs(
      "usage: tandem-diagnose EXPECTED MEASURED [options]\n"
      "       tandem-diagnose --kineto TRACE [options]\n"
      "\n"
      "Finds lost expected overlap (with its cause) and harmful overlap in a\n"
      "measured step. EXPECTED: the simulator's trace (--tandem-simulate=\n"
      "trace=), a plan (--tandem-export-plan) or a tandem-run trace (its\n"
      "prediction, or with --expected-from measured its measurement).\n"
      "MEASURED: a tandem-run trace, or a trace in the simulator's layout.\n"
      "\n"
      "  --json FILE              the report as JSON ('-': stdout)\n"
      "  --trace FILE             Perfetto trace with the anomalies marked\n"
      "  --function NAME          the function, when a file holds several\n"
      "  --alone REF              a run without overlap (tandem-run --trace\n"
      "                           of the reference plan): times alone\n"
      "  --expected-from WHAT     predicted (default) or measured: which\n"
      "                           process of a tandem-run trace is EXPECTED\n"
      "  --noise CLEAN            another clean run of the plan (repeatable):\n"
      "                           a candidate within the run-to-run spread\n"
      "                           of EXPECTED and these runs is reported as\n"
      "                           within noise, not as an anomaly\n"
      "  --noise-margin M         a noise band is M x the largest deviation\n"
      "                           of the clean runs (default 1.5)\n"
      "  --min-lost-us X          smallest loss reported (default 10; 5 with\n"
      "                           --kineto)\n"
      "  --min-lost-fraction F    ... and at least F x the op's duration\n"
      "                           (default 0.1)\n"
      "  --gate-tolerance-us X    an op ending this close before another's\n"
      "                           start may have held it back (default 10)\n"
      "  --host-tolerance-us X    slack between host launch and GPU start\n"
      "                           (default 20)\n"
      "  --all-collectives        list every collective in the text report\n"
      "  --quiet                  no text report (with --json or --trace)\n"
      "  --kineto TRACE           read a PyTorch profiler trace instead\n"
      "  --collective-pattern RE  --kineto: collective kernels' names\n"
      "                           (default ^nccl(Dev)?Kernel)\n"
      "\n"
      "Exit codes: 0 diagnosed (anomalies or not), 1 unreadable or\n"
      "mismatched inputs, 2 usage.\n",
      out);
}

struct Options {
  std::vector<std::string> inputs, noisePaths;
  std::string jsonPath, tracePath, function, kinetoPath, pattern, alonePath;
  bool expectedFromMeasured = false, allCollectives = false, quiet = false;
  DiagnosisOptions diagnosis;
  bool minLostGiven = false, fractionGiven = false;
  double noiseMargin = 1.5;
  bool noiseMarginGiven = false;
};

bool parseNumber(const char *text, double &out) {
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(text, &end);
  if (errno || !end || *end || !std::isfinite(v) || v < 0)
    return false;
  out = v;
  return true;
}

int parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *what) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tandem-diagnose: %s needs a value\n", what);
        return nullptr;
      }
      return argv[++i];
    };
    struct {
      const char *flag;
      double *field;
      bool *given;
    } numbers[] = {
        {"--min-lost-us", &o.diagnosis.minLostUs, &o.minLostGiven},
        {"--min-lost-fraction", &o.diagnosis.minLostFraction, &o.fractionGiven},
        {"--gate-tolerance-us", &o.diagnosis.gateToleranceUs, nullptr},
        {"--host-tolerance-us", &o.diagnosis.hostToleranceUs, nullptr},
        {"--noise-margin", &o.noiseMargin, &o.noiseMarginGiven}};
    bool handled = false;
    for (auto &n : numbers) {
      if (a != n.flag)
        continue;
      const char *v = value(n.flag);
      if (!v)
        return kExitUsage;
      if (!parseNumber(v, *n.field)) {
        std::fprintf(stderr,
                     "tandem-diagnose: %s needs a number >= 0, got '%s'\n",
                     n.flag, v);
        return kExitUsage;
      }
      if (n.given)
        *n.given = true;
      handled = true;
    }
    if (handled)
      continue;
    if (a == "--help" || a == "-h") {
      printHelp(stdout);
      std::exit(0);
    } else if (a == "--json" || a == "--trace" || a == "--function" ||
               a == "--kineto" || a == "--collective-pattern" ||
               a == "--alone") {
      const char *v = value(a.c_str());
      if (!v)
        return kExitUsage;
      (a == "--json"       ? o.jsonPath
       : a == "--trace"    ? o.tracePath
       : a == "--function" ? o.function
       : a == "--kineto"   ? o.kinetoPath
       : a == "--alone"    ? o.alonePath
                           : o.pattern) = v;
    } else if (a == "--noise") {
      const char *v = value("--noise");
      if (!v)
        return kExitUsage;
      o.noisePaths.push_back(v);
    } else if (a == "--expected-from") {
      const char *v = value("--expected-from");
      if (!v)
        return kExitUsage;
      std::string w = v;
      if (w != "measured" && w != "predicted") {
        std::fprintf(stderr,
                     "tandem-diagnose: --expected-from must be predicted or "
                     "measured, got '%s'\n",
                     v);
        return kExitUsage;
      }
      o.expectedFromMeasured = w == "measured";
    } else if (a == "--all-collectives") {
      o.allCollectives = true;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr,
                   "tandem-diagnose: unknown option '%s' (see --help)\n",
                   a.c_str());
      return kExitUsage;
    } else {
      o.inputs.push_back(a);
    }
  }
  if (!o.kinetoPath.empty()) {
    if (!o.inputs.empty()) {
      std::fprintf(stderr, "tandem-diagnose: --kineto takes one trace and no "
                           "EXPECTED/MEASURED\n");
      return kExitUsage;
    }
    if (!o.tracePath.empty() || !o.alonePath.empty() || !o.noisePaths.empty()) {
      std::fprintf(stderr,
                   "tandem-diagnose: --%s is not available with "
                   "--kineto\n",
                   !o.tracePath.empty()   ? "trace"
                   : !o.alonePath.empty() ? "alone"
                                          : "noise");
      return kExitUsage;
    }
    return 0;
  }
  if (!o.pattern.empty()) {
    std::fprintf(stderr,
                 "tandem-diagnose: --collective-pattern needs --kineto\n");
    return kExitUsage;
  }
  if (o.inputs.size() != 2) {
    std::fprintf(stderr,
                 "tandem-diagnose: needs EXPECTED and MEASURED, got %zu "
                 "file(s) (see --help)\n",
                 o.inputs.size());
    return kExitUsage;
  }
  if (o.noiseMarginGiven && o.noisePaths.empty()) {
    std::fprintf(stderr, "tandem-diagnose: --noise-margin needs --noise\n");
    return kExitUsage;
  }
  if (o.quiet && o.jsonPath.empty() && o.tracePath.empty()) {
    std::fprintf(stderr, "tandem-diagnose: --quiet needs --json or --trace\n");
    return kExitUsage;
  }
  return 0;
}

/// Writes through `write` to `path` ('-' = stdout).
template <typename Write> bool writeTo(const std::string &path, Write write) {
  if (path == "-") {
    write(std::cout);
    return static_cast<bool>(std::cout);
  }
  std::ofstream out(path);
  if (!out) {
    std::fprintf(stderr, "tandem-diagnose: cannot write '%s'\n", path.c_str());
    return false;
  }
  write(out);
  out.close();
  if (!out) {
    std::fprintf(stderr, "tandem-diagnose: cannot write '%s'\n", path.c_str());
    return false;
  }
  return true;
}

int runKineto(const Options &o) {
  KinetoOptions ko;
  if (!o.pattern.empty())
    ko.collectivePattern = o.pattern;
  if (o.minLostGiven)
    ko.minLostUs = o.diagnosis.minLostUs;
  if (o.fractionGiven)
    ko.minLostFraction = o.diagnosis.minLostFraction;
  std::string error;
  std::optional<KinetoTrace> trace = readKinetoTrace(o.kinetoPath, ko, error);
  if (!trace) {
    std::fprintf(stderr, "tandem-diagnose: %s\n", error.c_str());
    return kExitError;
  }
  KinetoReport report = analyseKineto(*trace, ko);
  if (!o.quiet)
    printKinetoReport(*trace, report, std::cout);
  if (!o.jsonPath.empty() && !writeTo(o.jsonPath, [&](std::ostream &os) {
        writeKinetoJson(*trace, report, os);
      }))
    return kExitError;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parseArgs(argc, argv, o))
    return rc;
  if (!o.kinetoPath.empty())
    return runKineto(o);

  std::string error;
  std::optional<Timeline> expected =
      readTimeline(o.inputs[0],
                   o.expectedFromMeasured ? TimelineSource::Measured
                                          : TimelineSource::Predicted,
                   o.function, error);
  if (!expected) {
    std::fprintf(stderr, "tandem-diagnose: EXPECTED: %s\n", error.c_str());
    return kExitError;
  }
  std::optional<Timeline> measured =
      readTimeline(o.inputs[1], TimelineSource::Measured, o.function, error);
  if (!measured) {
    std::fprintf(stderr, "tandem-diagnose: MEASURED: %s\n", error.c_str());
    return kExitError;
  }
  std::optional<Timeline> alone;
  if (!o.alonePath.empty()) {
    alone =
        readTimeline(o.alonePath, TimelineSource::Measured, o.function, error);
    if (!alone) {
      std::fprintf(stderr, "tandem-diagnose: --alone: %s\n", error.c_str());
      return kExitError;
    }
    o.diagnosis.aloneReference = &*alone;
  }
  // The noise floor: EXPECTED against the other clean runs, with the same
  // thresholds and times alone as the diagnosis.
  std::vector<Timeline> clean;
  for (const std::string &path : o.noisePaths) {
    std::optional<Timeline> run =
        readTimeline(path, TimelineSource::Measured, o.function, error);
    if (!run) {
      std::fprintf(stderr, "tandem-diagnose: --noise: %s\n", error.c_str());
      return kExitError;
    }
    clean.push_back(std::move(*run));
  }
  std::optional<NoiseFloor> noise;
  if (!clean.empty()) {
    std::vector<const Timeline *> runs;
    for (const Timeline &t : clean)
      runs.push_back(&t);
    noise =
        measureNoiseFloor(*expected, runs, o.diagnosis, o.noiseMargin, error);
    if (!noise) {
      std::fprintf(stderr, "tandem-diagnose: --noise: %s\n", error.c_str());
      return kExitError;
    }
    o.diagnosis.noise = &*noise;
  }
  std::optional<Diagnosis> d =
      diagnose(*expected, *measured, o.diagnosis, error);
  if (!d) {
    std::fprintf(stderr, "tandem-diagnose: %s\n", error.c_str());
    return kExitError;
  }
  if (!o.quiet)
    printReport(*d, *expected, *measured, o.allCollectives, std::cout);
  if (!o.jsonPath.empty() && !writeTo(o.jsonPath, [&](std::ostream &os) {
        writeReportJson(*d, *expected, *measured, os);
      }))
    return kExitError;
  if (!o.tracePath.empty() && !writeTo(o.tracePath, [&](std::ostream &os) {
        writeDiagnosisTrace(*d, *expected, *measured, os);
      }))
    return kExitError;
  return 0;
}
