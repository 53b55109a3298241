//===- Report.h - A diagnosis as text, JSON and a Perfetto trace -*- C++
//-*-===//
//
// The three outputs of tandem-diagnose (docs/diagnosis.md lists every
// field): the ranked text report, the JSON report whose top-level
// `anomalies` list has one entry per anomaly (kind, ops, cause, lost_us),
// and a Chrome trace of both timelines with every anomaly on its own track
// and on the ops it involves.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIAGNOSIS_REPORT_H
#define TANDEM_DIAGNOSIS_REPORT_H

#include "tandem/Diagnosis/Diagnose.h"

#include <ostream>

namespace tandem {
namespace diagnosis {

/// The ranked text report. `allCollectives` lists every collective, not
/// only those whose exposure changed.
void printReport(const Diagnosis &d, const Timeline &expected,
                 const Timeline &measured, bool allCollectives,
                 std::ostream &os);

/// The JSON report (two-space indentation).
void writeReportJson(const Diagnosis &d, const Timeline &expected,
                     const Timeline &measured, std::ostream &os);

/// The Perfetto trace: process 0 the measured timeline, with an
/// "anomalies" track and each involved op's args.anomalies; process 1 the
/// expected one.
void writeDiagnosisTrace(const Diagnosis &d, const Timeline &expected,
                         const Timeline &measured, std::ostream &os);

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_DIAGNOSIS_REPORT_H
