//===- dnnc-onnx-import-fuzzer.cpp - libFuzzer target: ONNX import -*- C++ -*-//
//
// Feeds arbitrary bytes, as a model.onnx, to the ONNX importer (what
// `dnnc --compile-to=import` runs) and verifies every module it returns. A
// rejected model must come back as an error string, never a crash, a
// sanitizer report or an invalid module. Built with DNNC_ENABLE_FUZZERS=ON
// and clang (scripts/fuzz.sh, docs/testing.md).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Target/ONNX/ImportONNX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The importer reads a path (external data is resolved next to it): the
  // input goes into an anonymous in-memory file.
  int fd = memfd_create("model.onnx", 0);
  if (fd < 0)
    std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0)
      std::abort();
    done += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);

  // A fresh context per input: interned constants must not pile up.
  mlir::MLIRContext context;
  context.loadDialect<dnnc::dnn::DnnDialect, mlir::func::FuncDialect>();
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      dnnc::importONNXModel(context, path, dnnc::ONNXImportOptions(), error);
  close(fd);
  if (module && failed(mlir::verify(*module)))
    std::abort(); // The importer returned an invalid module.
  if (!module && error.empty())
    std::abort(); // A rejection must say why.
  return 0;
}
