//===- dnnc-opt.cpp - dnnc's optimizer driver ----------------*- C++ -*-===//
//
// mlir-opt with dnnc's dialects, passes and pipelines registered.
//
//===----------------------------------------------------------------------===//

#include "dnnc/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dnnc::registerAllDialects(registry);
  dnnc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dnnc optimizer driver\n", registry));
}
