// RUN: dnnc-opt %s -split-input-file -verify-diagnostics --dnnc-search-shardings="axes=tp,pp"
// RUN: not dnnc-opt %s -split-input-file --dnnc-search-shardings="mode=fly" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not dnnc-opt %s -split-input-file --dnnc-search-shardings="cluster=nope" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not dnnc-opt %s -split-input-file --dnnc-search-shardings="memory-weight=-1" 2>&1 | FileCheck %s --check-prefix=WEIGHT

// Options of dnnc-search-shardings that cannot work.

// MODE: for the --mode option: Cannot find option named 'fly'!
// CLUSTER: error: cluster 'nope': neither a preset
// WEIGHT: error: the memory weight must be a finite number >= 0, not -1

// A searched axis the mesh lacks.
// expected-error @below {{mesh @mesh has no axis 'pp' to search}}
dist.mesh @mesh ["tp" = 2 : intra]
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = dnn.relu %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// No mesh to shard over.
// expected-error @below {{dnnc-search-shardings needs a dist.mesh to shard over}}
module {
  func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %y = dnn.relu %x : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
