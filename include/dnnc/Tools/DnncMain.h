//===- DnncMain.h - the dnnc compiler driver --------------------*- C++ -*-===//
//
// The body of the `dnnc` tool, kept in a library so the tool's main stays a
// few lines and tests can drive it.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TOOLS_DNNCMAIN_H
#define DNNC_TOOLS_DNNCMAIN_H

namespace dnnc {

/// Runs the dnnc command line: parses flags, imports the model, runs the
/// phases and writes the result. Returns the process exit code; every error
/// is one `error: ...` line on stderr and leaves no output file behind.
int dnncMain(int argc, char **argv);

} // namespace dnnc

#endif // DNNC_TOOLS_DNNCMAIN_H
