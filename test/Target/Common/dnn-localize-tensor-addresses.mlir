// RUN: dnnc-opt %s --dnn-localize-tensor-addresses | FileCheck %s
// RUN: dnnc-opt %s --dnn-localize-tensor-addresses --one-shot-bufferize="bufferize-function-boundaries" \
// RUN: | FileCheck %s --check-prefix=BUF

func.func private @read(index)

// Two reads of %t through one address (as CSE leaves them), with an op in
// between that may reuse %t's buffer: each read gets its own to_buffer, so
// bufferization sees %t read after the negation and gives the negation a
// buffer of its own.
// CHECK-LABEL: func.func @shared_address(
// CHECK-SAME: %[[T:.*]]: tensor<4xf32>
// CHECK: %[[D:.*]] = linalg.generic
// CHECK: %[[M0:.*]] = bufferization.to_buffer %[[D]] read_only
// CHECK-NEXT: %[[P0:.*]] = memref.extract_aligned_pointer_as_index %[[M0]]
// CHECK-NEXT: call @read(%[[P0]])
// CHECK: %[[N:.*]] = linalg.generic
// CHECK: %[[M1:.*]] = bufferization.to_buffer %[[D]] read_only
// CHECK-NEXT: %[[P1:.*]] = memref.extract_aligned_pointer_as_index %[[M1]]
// CHECK-NEXT: call @read(%[[P1]])
// CHECK-NOT: bufferization.to_buffer
// CHECK: return %[[N]]

// Without the pass the negation is bufferized into the sum's buffer (one
// allocation); with it, each has its own.
// BUF-LABEL: func.func @shared_address(
// BUF-COUNT-2: memref.alloc()
// BUF-NOT: memref.alloc()
// BUF-LABEL: func.func @view_chain(
func.func @shared_address(%t: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.addf %in, %in : f32
    linalg.yield %x : f32
  } -> tensor<4xf32>
  %m = bufferization.to_buffer %d read_only : tensor<4xf32> to memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %m : memref<4xf32> -> index
  call @read(%p) : (index) -> ()
  %n = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%d : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.negf %in : f32
    linalg.yield %x : f32
  } -> tensor<4xf32>
  call @read(%p) : (index) -> ()
  return %n : tensor<4xf32>
}

// A view between the buffer and the address is cloned too; a single read
// keeps its chain where it is.
// CHECK-LABEL: func.func @view_chain(
// CHECK: %[[M:.*]] = bufferization.to_buffer
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[M]]
// CHECK-NEXT: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[V]]
// CHECK-NEXT: call @read(%[[P]])
// CHECK-NOT: bufferization.to_buffer
func.func @view_chain(%t: tensor<4xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
  %v = memref.subview %m[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  %p = memref.extract_aligned_pointer_as_index %v : memref<2xf32, strided<[1], offset: 1>> -> index
  call @read(%p) : (index) -> ()
  return
}
