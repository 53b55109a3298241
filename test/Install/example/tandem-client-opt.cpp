//===- tandem-client-opt.cpp - An opt driver outside Tandem's tree --------===//
//
// What another compiler's mlir-opt-like driver adds to use Tandem: the
// dialect in its registry and registerTandemPasses(). Built against the
// installed package by test/Install/out-of-tree.test.
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
      argc, argv, "A client compiler's driver with Tandem's passes\n",
      registry));
}
