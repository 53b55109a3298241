//===- Window.cpp - The engine's rate rule in closed form -----------------===//

#include "tandem/Engine/Window.h"

using namespace mlir::tandem;
using namespace mlir::tandem::sim;

WindowTimeline sim::runWindow(llvm::ArrayRef<WindowPhases> ops,
                              double collectiveBesideUs,
                              double collectiveAloneUs) {
  WindowTimeline t;
  double now = 0, collectiveLeft = 1.0; // Fraction of the collective's work.
  bool collectiveDone = false;
  for (const WindowPhases &op : ops) {
    if (collectiveDone) {
      now += op.afterUs;
      continue;
    }
    ++t.startedBeside;
    double opUs = op.besideUs,
           collectiveUs = collectiveLeft * collectiveBesideUs;
    if (opUs < collectiveUs) {
      now += opUs;
      collectiveLeft -= opUs / collectiveBesideUs;
      continue;
    }
    // The collective ends during this op; the op's remaining fraction runs
    // at its alone rate.
    now += collectiveUs;
    t.collectiveEndUs = now;
    collectiveDone = true;
    now += (1.0 - collectiveUs / opUs) * op.afterUs;
  }
  t.computeEndUs = now;
  if (!collectiveDone)
    t.collectiveEndUs = now + collectiveLeft * collectiveAloneUs;
  return t;
}
