//===- tandem-opt.cpp - Optimizer driver for tandem IR --------------------===//
//
// mlir-opt for Tandem: registers only the dialects a training step uses
// (tandem, func) and Tandem's passes plus MLIR's generic transforms.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/TandemOps.h"
#include "tandem/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::tandem::registerTandemPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tandem::TandemDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Tandem optimizer: overlap communication with computation\n",
      registry));
}
