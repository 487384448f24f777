//===- asan-uninstrumented-llvm.h - ASan with an uninstrumented LLVM -*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Force-included (-include) into every file of the sanitized build
// (scripts/common.sh, dnnc_configure_sanitized). dnnc's code is built with
// AddressSanitizer but links Debian's libMLIR and libLLVM, which are not.
// LLVM's headers poison the unused end of BumpPtrAllocator slabs when the
// including file is built with ASan (llvm/Support/Compiler.h,
// LLVM_ADDRESS_SANITIZER_BUILD); the library's own copies of that code do
// not, and neither side unpoisons for the other. Attributes and types
// uniqued by the library then land in memory dnnc's copy poisoned, and the
// first instrumented read of them is reported as use-after-poison. Turning
// the two annotation calls into no-ops makes both sides agree: allocator
// slabs stay unpoisoned, as in the library; every heap, stack and global
// access of dnnc's code stays checked.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_CMAKE_ASAN_UNINSTRUMENTED_LLVM_H
#define DNNC_CMAKE_ASAN_UNINSTRUMENTED_LLVM_H

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#undef ASAN_POISON_MEMORY_REGION
#undef ASAN_UNPOISON_MEMORY_REGION
#define __asan_poison_memory_region(addr, size) ((void)(addr), (void)(size))
#define __asan_unpoison_memory_region(addr, size) ((void)(addr), (void)(size))
#endif
#endif

#endif // DNNC_CMAKE_ASAN_UNINSTRUMENTED_LLVM_H
