//===- dnnc-translate.cpp - dnnc's translation driver --------*- C++ -*-===//
//
// mlir-translate with dnnc's translations out of MLIR registered
// (`--mlir-to-cuda`, `--mlir-to-cuda-emulation`).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CUDA/CUDATarget.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  dnnc::registerCUDATranslations();
  return mlir::failed(
             mlir::mlirTranslateMain(argc, argv, "dnnc translation driver\n"))
             ? 1
             : 0;
}
