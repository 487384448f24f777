// RUN: dnnc-translate --mlir-to-cuda %s -split-input-file -verify-diagnostics

// Loop bounds must be static.
func.func @main(%a: memref<?xf32>, %out: memref<?xf32>) {
  // expected-error @+1 {{cuda target: dynamic loop bounds are not supported}}
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// Every op of a kernel body must have a C++ translation.
func.func @main(%a: memref<4xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    // expected-error @+1 {{cuda target: 'math.cbrt' is not supported in generated kernels}}
    %c = math.cbrt %x : f32
    linalg.yield %c : f32
  }
  return
}

// -----

// Rank functions take buffers only.
// expected-error @+1 {{cuda target: @main takes a non-buffer argument}}
func.func @main(%a: memref<4xf32>, %s: f32) {
  return
}

// -----

// Results are out-params.
// expected-error @+1 {{cuda target: @main returns values (results must be out-params)}}
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  return %a : memref<4xf32>
}

// -----

// Host code is straight-line buffer and runtime-call code.
func.func @main(%a: memref<4xf32>) {
  // expected-error @+1 {{cuda target: cannot generate host code for 'memref.alloca'}}
  %t = memref.alloca() : memref<4xf32>
  return
}

// -----

// Only constant globals.
// expected-error @+1 {{cuda target: only constant globals are supported}}
memref.global "private" @state : memref<4xf32> = uninitialized
func.func @main(%a: memref<4xf32>) {
  return
}
