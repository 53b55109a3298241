//===- RemarkLog.cpp - Explanations of decisions, kept until emitted ------===//

#include "tandem/Scheduling/RemarkLog.h"

#include "mlir/IR/MLIRContext.h"

using namespace mlir;
using namespace mlir::tandem;

Diagnostic &RemarkLog::remark(Location loc) {
  return remarks.emplace_back(loc, DiagnosticSeverity::Remark);
}

Diagnostic &RemarkLog::remark(Operation *op) {
  Diagnostic &d = remark(op->getLoc());
  if (op->getContext()->shouldPrintOpOnDiagnostic())
    d.attachNote(op->getLoc()) << "see current operation: " << *op;
  return d;
}

void RemarkLog::append(RemarkLog &&other) {
  for (Diagnostic &d : other.remarks)
    remarks.push_back(std::move(d));
  other.remarks.clear();
}

void RemarkLog::emit(MLIRContext *ctx) {
  DiagnosticEngine &engine = ctx->getDiagEngine();
  for (Diagnostic &d : remarks)
    engine.emit(std::move(d));
  remarks.clear();
}
