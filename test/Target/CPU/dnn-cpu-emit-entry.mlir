// RUN: dnnc-opt %s --dnn-cpu-emit-entry -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func internal @main(
// CHECK-LABEL: llvm.func @dnnc_entry(
// CHECK-SAME: %[[BUF:.*]]: !llvm.ptr)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[BUF]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[BUF]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @main(%[[P0]], %[[P1]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK: llvm.return
llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr) {
  llvm.return
}

// -----

// The packager's argument attributes are dropped, the llvm ones kept.
// CHECK-LABEL: llvm.func internal @main(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr)
// CHECK-NOT: dnn.
llvm.func @main(%in: !llvm.ptr {dnn.name = "x", llvm.noalias},
                %w: !llvm.ptr {dnn.name = "w", dnn.weight = dense<1.0> : tensor<2xf32>}) {
  llvm.return
}

// -----

// expected-error @+1 {{no LLVM function @main (or @stage_K) to wrap}}
module {
  llvm.func @other() {
    llvm.return
  }
}

// -----

// expected-error @+1 {{@main must take only buffer pointers}}
llvm.func @main(%n: i64) {
  llvm.return
}

// -----

module {
  llvm.func @main(%p: !llvm.ptr) {
    llvm.return
  }
  // expected-error @-4 {{symbol dnnc_entry is already defined}}
  llvm.func @dnnc_entry(%p: !llvm.ptr) {
    llvm.return
  }
}
