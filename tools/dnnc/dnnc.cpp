//===- dnnc.cpp - the dnnc compiler -------------------------*- C++ -*-===//
//
// Compiles an ONNX model into a distributed program; see dnnc --help.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Tools/DnncMain.h"

int main(int argc, char **argv) { return dnnc::dnncMain(argc, argv); }
