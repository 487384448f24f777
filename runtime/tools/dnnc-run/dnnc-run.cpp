//===- dnnc-run.cpp - Run a dnnc plan.bin ----------------------*- C++ -*-===//
//
// The dnnc-run tool; see DnncRun.h and docs/runtime.md.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/DnncRun.h"

#include <iostream>

int main(int argc, char **argv) {
  return dnnc::rt::dnncRunMain(argc, argv, std::cout, std::cerr);
}
