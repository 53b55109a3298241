//===- tandem-fuzz-replay.cpp - Run fuzz inputs without the fuzzer --------===//
//
// Runs one fuzz target's entry on each file given: the regression corpus
// (test/tools/tandem-fuzz/regressions) in check-tandem, or a crash file a
// fuzz run left, in a normal build and a debugger. Prints one line per file;
// a crash or a hang is the failure.
//
//   tandem-fuzz-replay <ir-parse|simulate|overlap|calibration> FILE...
//
//===----------------------------------------------------------------------===//

#include "FuzzEntries.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::tandem;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  fuzz::Target target;
  if (argc < 3 || !fuzz::parseTarget(argv[1], target)) {
    llvm::errs() << "usage: tandem-fuzz-replay "
                    "<ir-parse|simulate|overlap|calibration> FILE...\n";
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    auto buffer = llvm::MemoryBuffer::getFile(argv[i]);
    if (!buffer) {
      llvm::errs() << "tandem-fuzz-replay: error: cannot read '" << argv[i]
                   << "': " << buffer.getError().message() << "\n";
      return 1;
    }
    llvm::StringRef bytes = (*buffer)->getBuffer();
    fuzz::runOne(target, llvm::ArrayRef<uint8_t>(
                             reinterpret_cast<const uint8_t *>(bytes.data()),
                             bytes.size()));
    llvm::outs() << "ran " << argv[1] << " on " << argv[i] << "\n";
  }
  return 0;
}
