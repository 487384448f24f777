//===- DnncRun.h - The dnnc-run command line -------------------*- C++ -*-===//
//
// The whole of `dnnc-run`, as a function the tool's main calls and tests can
// call in-process.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_DNNCRUN_H
#define DNNC_RUNTIME_DNNCRUN_H

#include <ostream>

namespace dnnc::rt {

/// Runs `dnnc-run` with `argv[1..argc)`: results and timings go to `out`,
/// errors (one `error: ...` line) to `err`. Returns the exit code: 0 on
/// success, 1 on any error.
int dnncRunMain(int argc, const char *const *argv, std::ostream &out,
                std::ostream &err);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_DNNCRUN_H
