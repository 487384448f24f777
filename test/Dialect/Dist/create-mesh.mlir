// RUN: dnnc-opt %s --dist-create-mesh='axes=dp=2,tp=4' | FileCheck %s --check-prefix=DEFAULT
// RUN: dnnc-opt %s --dist-create-mesh='name=cluster axes=node=2:inter,gpu=8:intra,x=1' | FileCheck %s --check-prefix=LINKS
// RUN: dnnc-opt %s --dist-create-mesh | FileCheck %s --check-prefix=NONE
// RUN: dnnc-opt %s --dist-create-mesh='axes=' | FileCheck %s --check-prefix=NONE

// The mesh goes first in the module; the links default to intra.
// DEFAULT: module {
// DEFAULT-NEXT: dist.mesh @mesh ["dp" = 2 : intra, "tp" = 4 : intra]
// DEFAULT-NEXT: func.func @f

// LINKS: dist.mesh @cluster ["node" = 2 : inter, "gpu" = 8 : intra, "x" = 1 : intra]

// Without axes nothing changes: one device, no mesh.
// NONE-NOT: dist.mesh

// Errors: malformed entries, sizes below 1, unknown links, repeated names,
// a name that is taken.
// RUN: not dnnc-opt %s --dist-create-mesh='axes=dp' 2>&1 | FileCheck %s --check-prefix=NOSIZE
// NOSIZE: error: dist-create-mesh: axes='dp': malformed entry 'dp' (expected NAME=SIZE or NAME=SIZE:LINK, LINK being intra or inter)
// RUN: not dnnc-opt %s --dist-create-mesh='axes=dp=2,,tp=2' 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: dist-create-mesh: axes='dp=2,,tp=2': malformed entry ''
// RUN: not dnnc-opt %s --dist-create-mesh='axes==2' 2>&1 | FileCheck %s --check-prefix=NONAME
// NONAME: error: dist-create-mesh: axes='=2': malformed entry '=2'
// RUN: not dnnc-opt %s --dist-create-mesh='axes=dp=2:' 2>&1 | FileCheck %s --check-prefix=NOLINK
// NOLINK: error: dist-create-mesh: axes='dp=2:': malformed entry 'dp=2:'
// RUN: not dnnc-opt %s --dist-create-mesh='axes=dp=two' 2>&1 | FileCheck %s --check-prefix=NOTINT
// NOTINT: error: dist-create-mesh: axes='dp=two': axis 'dp' has size 'two', which is not an integer
// RUN: not dnnc-opt %s --dist-create-mesh='axes=dp=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: dist-create-mesh: axes='dp=0': axis 'dp' has size 0; a mesh axis needs at least 1 device
// RUN: not dnnc-opt %s --dist-create-mesh='axes=dp=-2' 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: dist-create-mesh: axes='dp=-2': axis 'dp' has size -2; a mesh axis needs at least 1 device
// RUN: not dnnc-opt %s --dist-create-mesh='axes=dp=2:nvlink' 2>&1 | FileCheck %s --check-prefix=LINK
// LINK: error: dist-create-mesh: axes='dp=2:nvlink': axis 'dp' has link class 'nvlink' (expected intra or inter)
// RUN: not dnnc-opt %s --dist-create-mesh='axes=dp=2,tp=2,dp=4' 2>&1 | FileCheck %s --check-prefix=DUP
// DUP: error: dist-create-mesh: axes='dp=2,tp=2,dp=4': more than one axis named 'dp'
// RUN: not dnnc-opt %s --dist-create-mesh='axes=a=4294967296,b=4294967296' 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: error: dist-create-mesh: axes='a=4294967296,b=4294967296': the mesh has more devices than fit in a 64-bit integer
// RUN: not dnnc-opt %s --dist-create-mesh='name=f axes=dp=2' 2>&1 | FileCheck %s --check-prefix=TAKEN
// TAKEN: error: dist-create-mesh: a symbol named @f exists already
// TAKEN: note: the existing symbol
// RUN: not dnnc-opt %s --dist-create-mesh='name= axes=dp=2' 2>&1 | FileCheck %s --check-prefix=NONAMEOPT
// NONAMEOPT: error: dist-create-mesh: the mesh name (option 'name') is empty

func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}
