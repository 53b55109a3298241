//===- FuzzTarget.cpp - libFuzzer entry point of one fuzz target ----------===//
//
// Compiled once per target with TANDEM_FUZZ_TARGET set to a fuzz::Target
// enumerator (tools/tandem-fuzz/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "FuzzEntries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return mlir::tandem::fuzz::runOne(
      mlir::tandem::fuzz::Target::TANDEM_FUZZ_TARGET,
      llvm::ArrayRef<uint8_t>(data, size));
}
