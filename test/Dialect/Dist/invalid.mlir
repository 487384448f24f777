// RUN: dnnc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #dist.axis and dist.mesh
//===----------------------------------------------------------------------===//

// expected-error @+1 {{mesh axis name must be non-empty}}
dist.mesh @m ["" = 2 : intra]

// -----

// expected-error @+1 {{mesh axis "a" must have size >= 1, got 0}}
dist.mesh @m ["a" = 0 : intra]

// -----

// expected-error @+1 {{expected link class 'intra' or 'inter', got 'fast'}}
dist.mesh @m ["a" = 2 : fast]

// -----

// expected-error @+1 {{'dist.mesh' op must have at least one axis}}
dist.mesh @m []

// -----

// expected-error @+1 {{'dist.mesh' op has more than one axis named "a"}}
dist.mesh @m ["a" = 2 : intra, "a" = 2 : inter]

// -----

// expected-error @+1 {{'dist.mesh' op has more devices than fit in a 64-bit integer}}
dist.mesh @m ["a" = 4294967296 : inter, "b" = 4294967296 : intra]

// -----

// expected-error @+1 {{'dist.mesh' op devices must list 4 device ids (the product of the axis sizes), got 3}}
dist.mesh @m ["a" = 2 : inter, "b" = 2 : intra] devices = [0, 1, 2]

// -----

// expected-error @+1 {{'dist.mesh' op device id 4 is out of range [0, 4)}}
dist.mesh @m ["a" = 2 : inter, "b" = 2 : intra] devices = [0, 1, 4, 2]

// -----

// expected-error @+1 {{'dist.mesh' op device id 1 appears more than once in devices}}
dist.mesh @m ["a" = 2 : inter, "b" = 2 : intra] devices = [0, 1, 1, 2]

// -----

func.func @mesh_in_func() {
  // expected-error @+1 {{'dist.mesh' op expects parent op 'builtin.module'}}
  dist.mesh @m ["a" = 2 : intra]
  return
}

//===----------------------------------------------------------------------===//
// #dist.sharding
//===----------------------------------------------------------------------===//

// -----

dist.mesh @m ["a" = 2 : intra]
// expected-error @+1 {{mesh axis names must be non-empty}}
func.func @empty_axis_name(%x: tensor<4xf32> {dist.sharding = #dist.sharding<@m, [{""}]>})

// -----

dist.mesh @m ["a" = 2 : intra]
// expected-error @+1 {{mesh axis "a" is used more than once}}
func.func @axis_used_twice(%x: tensor<4x4xf32> {dist.sharding = #dist.sharding<@m, [{"a"}, {"a"}]>})

// -----

dist.mesh @m ["a" = 2 : intra]
// expected-error @+1 {{mesh axis "a" is used more than once}}
func.func @axis_split_and_partial(%x: tensor<4xf32> {dist.sharding = #dist.sharding<@m, [{"a"}], partial = {"a"}>})

//===----------------------------------------------------------------------===//
// dist.sharding / dist.shardings discardable attributes
//===----------------------------------------------------------------------===//

// -----

dist.mesh @m ["a" = 2 : intra]
func.func @shardings_not_array(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.shardings' must be an array of #dist.sharding}}
  %0 = arith.addf %x, %x {dist.shardings = [1]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra]
func.func @shardings_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.shardings' has 2 entries but the op has 1 results}}
  %0 = arith.addf %x, %x {dist.shardings = [#dist.sharding<@m, [{}]>, #dist.sharding<@m, [{}]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra]
func.func @sharding_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.sharding' belongs on function arguments and results; use 'dist.shardings' on ops}}
  %0 = arith.addf %x, %x {dist.sharding = #dist.sharding<@m, [{}]>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra]
func.func @unknown_op_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op unknown dist attribute 'dist.foo'}}
  %0 = arith.addf %x, %x {dist.foo = 1} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra]
// expected-error @+1 {{'func.func' op 'dist.foo' is not a valid dist attribute on argument #0}}
func.func private @unknown_arg_attr(%x: tensor<4xf32> {dist.foo = 1})

// -----

dist.mesh @m ["a" = 2 : intra]
// expected-error @+1 {{'func.func' op 'dist.sharding' on result #0 must be a #dist.sharding attribute}}
func.func private @bad_result_attr() -> (tensor<4xf32> {dist.sharding = 1})

//===----------------------------------------------------------------------===//
// dist.annotate / dist.reshard
//===----------------------------------------------------------------------===//

// -----

func.func @unknown_mesh(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.annotate' op '@nope' does not name a dist.mesh}}
  %0 = dist.annotate %x sharding <@nope, [{}]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra]
func.func @annotate_rank(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.annotate' op sharding has rank 1 but the type 'tensor<4x4xf32>' has rank 2}}
  %0 = dist.annotate %x sharding <@m, [{"a"}]> : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra]
func.func @annotate_unknown_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.annotate' op mesh @m has no axis named "z"}}
  %0 = dist.annotate %x sharding <@m, [{"z"}]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @annotate_indivisible(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'dist.annotate' op dim 1 of size 6 is not divisible by 8, the number of shards of mesh axes {"a", "b"}}}
  %0 = dist.annotate %x sharding <@m, [{}, {"a", "b"}]> : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra]
dist.mesh @n ["a" = 2 : intra]
func.func @reshard_meshes(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.reshard' op cannot change meshes: 'from' is on @m but 'to' is on @n}}
  %0 = dist.reshard %x from <@m, [{}]> to <@n, [{"a"}]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 4 : intra]
func.func @reshard_from_indivisible(%x: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'dist.reshard' op 'from' dim 0 of size 6 is not divisible by 4, the number of shards of mesh axes {"a"}}}
  %0 = dist.reshard %x from <@m, [{"a"}]> to <@m, [{}]> : tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

dist.mesh @m ["a" = 4 : intra]
func.func @reshard_to_unknown_axis(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.reshard' op 'to' mesh @m has no axis named "b"}}
  %0 = dist.reshard %x to <@m, [{"b"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @no_axes(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.all_reduce' op requires at least one mesh axis}}
  %0 = dist.all_reduce sum %x on @m axes [] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @empty_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.broadcast' op mesh axis names must be non-empty}}
  %0 = dist.broadcast %x on @m axes [""] root = 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @repeated_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.all_reduce' op mesh axis "a" appears more than once in axes}}
  %0 = dist.all_reduce sum %x on @m axes ["a", "b", "a"] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @collective_unknown_mesh(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.all_reduce' op '@q' does not name a dist.mesh}}
  %0 = dist.all_reduce sum %x on @q axes ["a"] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @collective_unknown_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.all_reduce' op mesh @m has no axis named "c"}}
  %0 = dist.all_reduce sum %x on @m axes ["c"] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @gather_dim_range(%x: tensor<4x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dist.all_gather' op gather_dim 2 is out of range for rank 2}}
  %0 = dist.all_gather %x on @m axes ["a"] gather_dim = 2 : tensor<4x4xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @gather_result(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.all_gather' op expected result type 'tensor<4x32xf32>', got 'tensor<4x4xf32>'}}
  %0 = dist.all_gather %x on @m axes ["a", "b"] gather_dim = 1 : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @gather_element_type(%x: tensor<4x4xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'dist.all_gather' op requires the same element type for all operands and results}}
  %0 = dist.all_gather %x on @m axes ["a"] gather_dim = 1 : tensor<4x4xf32> -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @gather_rank(%x: tensor<4x4xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'dist.all_gather' op result type has different rank than operands}}
  %0 = dist.all_gather %x on @m axes ["a"] gather_dim = 1 : tensor<4x4xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @scatter_dim_range(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'dist.reduce_scatter' op scatter_dim -1 is out of range for rank 2}}
  %0 = dist.reduce_scatter sum %x on @m axes ["a"] scatter_dim = -1 : tensor<4x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @scatter_indivisible(%x: tensor<6x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'dist.reduce_scatter' op scatter_dim 0 of size 6 is not divisible by the group size 4}}
  %0 = dist.reduce_scatter sum %x on @m axes ["b"] scatter_dim = 0 : tensor<6x4xf32> -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @scatter_result(%x: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.reduce_scatter' op expected result type 'tensor<2x4xf32>', got 'tensor<4x4xf32>'}}
  %0 = dist.reduce_scatter sum %x on @m axes ["b"] scatter_dim = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @split_dim_range(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.all_to_all' op split_dim 2 is out of range for rank 2}}
  %0 = dist.all_to_all %x on @m axes ["a"] split_dim = 2 concat_dim = 0 : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @concat_dim_range(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.all_to_all' op concat_dim 3 is out of range for rank 2}}
  %0 = dist.all_to_all %x on @m axes ["a"] split_dim = 0 concat_dim = 3 : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @split_indivisible(%x: tensor<6x4xf32>) -> tensor<1x16xf32> {
  // expected-error @+1 {{'dist.all_to_all' op split_dim 0 of size 6 is not divisible by the group size 4}}
  %0 = dist.all_to_all %x on @m axes ["b"] split_dim = 0 concat_dim = 1 : tensor<6x4xf32> -> tensor<1x16xf32>
  return %0 : tensor<1x16xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @all_to_all_result(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'dist.all_to_all' op expected result type 'tensor<2x16xf32>', got 'tensor<8x4xf32>'}}
  %0 = dist.all_to_all %x on @m axes ["b"] split_dim = 0 concat_dim = 1 : tensor<8x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @root_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.broadcast' op root must be non-negative, got -1}}
  %0 = dist.broadcast %x on @m axes ["a"] root = -1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @root_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.broadcast' op root 2 is out of range for a group of 2 devices}}
  %0 = dist.broadcast %x on @m axes ["a"] root = 2 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// dist.shard_slice
//===----------------------------------------------------------------------===//

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @shard_slice_partial(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.shard_slice' op sharding must not have partial axes, got {"b"}}}
  %0 = dist.shard_slice %x to <@m, [{"a"}], partial = {"b"}> : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @shard_slice_unknown_mesh(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.shard_slice' op '@nope' does not name a dist.mesh}}
  %0 = dist.shard_slice %x to <@nope, [{"a"}]> : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @shard_slice_rank(%x: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.shard_slice' op sharding has rank 1 but the type 'tensor<8x4xf32>' has rank 2}}
  %0 = dist.shard_slice %x to <@m, [{"a"}]> : tensor<8x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @shard_slice_unknown_axis(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.shard_slice' op mesh @m has no axis named "z"}}
  %0 = dist.shard_slice %x to <@m, [{"z"}]> : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @shard_slice_indivisible(%x: tensor<6x4xf32>) -> tensor<6x1xf32> {
  // expected-error @+1 {{'dist.shard_slice' op dim 0 of size 6 is not divisible by 4, the number of shards of mesh axes {"b"}}}
  %0 = dist.shard_slice %x to <@m, [{"b"}, {}]> : tensor<6x4xf32> -> tensor<6x1xf32>
  return %0 : tensor<6x1xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @shard_slice_result(%x: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.shard_slice' op expected result type 'tensor<1x4xf32>' (the local type of 'tensor<8x4xf32>' under the sharding), got 'tensor<4x4xf32>'}}
  %0 = dist.shard_slice %x to <@m, [{"b", "a"}, {}]> : tensor<8x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @shard_slice_element_type(%x: tensor<8xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'dist.shard_slice' op requires the same element type for all operands and results}}
  %0 = dist.shard_slice %x to <@m, [{"a"}]> : tensor<8xf32> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

//===----------------------------------------------------------------------===//
// dist.send / dist.recv / dist.transfer
//===----------------------------------------------------------------------===//

// -----

func.func @send_peer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op peer rank must be non-negative, got -1}}
  dist.send %x to -1 tag 0 : tensor<4xf32>
  return
}

// -----

func.func @recv_tag() -> tensor<4xf32> {
  // expected-error @+1 {{'dist.recv' op tag must be non-negative, got -2}}
  %0 = dist.recv from 1 tag -2 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m ["a" = 2 : intra, "b" = 4 : inter]
func.func @send_peer_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op peer rank 8 is out of range for mesh @m of 8 devices}}
  dist.send %x to 8 tag 0 on @m : tensor<4xf32>
  return
}

// -----

func.func @recv_unknown_mesh() -> tensor<4xf32> {
  // expected-error @+1 {{'dist.recv' op '@m' does not name a dist.mesh}}
  %0 = dist.recv from 1 tag 0 on @m : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @transfer_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.transfer' op stage indices must be non-negative, got -1 and 1}}
  %0 = dist.transfer %x from stage -1 to stage 1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @transfer_same(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.transfer' op source and destination stages must differ, both are 1}}
  %0 = dist.transfer %x from stage 1 to stage 1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @transfer_backwards(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.transfer' op goes from stage 2 back to stage 1; transfers go to later stages}}
  %0 = dist.transfer %x from stage 2 to stage 1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @transfer_wrong_source(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dist.stage 0 -> (tensor<4xf32>) {
    dist.yield %x : tensor<4xf32>
  }
  // expected-error @+1 {{'dist.transfer' op transfers a result of stage 0 but names source stage 1}}
  %1 = dist.transfer %0 from stage 1 to stage 2 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// dist.stage / dist.yield
//===----------------------------------------------------------------------===//

// -----

func.func @stage_negative() {
  // expected-error @+1 {{'dist.stage' op stage index must be non-negative, got -1}}
  dist.stage -1 {
    dist.yield
  }
  return
}

// -----

func.func @stage_no_yield(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.stage' op body must end with 'dist.yield'}}
  dist.stage 0 {
    %0 = arith.addf %x, %x : tensor<4xf32>
  }
  return
}

// -----

func.func @stage_yield_types(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.stage' op yields (tensor<4xf32>) but the stage results are (tensor<8xf32>)}}
  %0 = dist.stage 0 -> (tensor<8xf32>) {
    dist.yield %x : tensor<4xf32>
  }
  return %0 : tensor<8xf32>
}

// -----

func.func @stage_block_args() {
  // expected-error @+1 {{'dist.stage' op region should have no arguments}}
  dist.stage 0 {
  ^bb0(%a: i32):
    dist.yield
  }
  return
}

// -----

func.func @stage_unknown_mesh() {
  // expected-error @+1 {{'dist.stage' op '@sub' does not name a dist.mesh}}
  dist.stage 0 on @sub {
    dist.yield
  }
  return
}

// -----

func.func @op_outside_stages(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dist.stage 0 -> (tensor<4xf32>) {
    %a = arith.addf %x, %x : tensor<4xf32>
    dist.yield %a : tensor<4xf32>
  }
  // expected-error @+1 {{'arith.mulf' op is outside every dist.stage of a function with pipeline stages: every op but dist.transfer and the terminator belongs to exactly one stage}}
  %1 = arith.mulf %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @stages_out_of_order() {
  dist.stage 1 {
    dist.yield
  }
  // expected-error @+1 {{'dist.stage' op has index 0 after stage 1; the stages of a function appear once each, in increasing order}}
  dist.stage 0 {
    dist.yield
  }
  return
}

// -----

func.func @stage_twice() {
  dist.stage 0 {
    dist.yield
  }
  // expected-error @+1 {{'dist.stage' op has index 0 after stage 0}}
  dist.stage 0 {
    dist.yield
  }
  return
}

// -----

func.func @stage_uses_other_stage(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{the value is defined here}}
  %0 = dist.stage 0 -> (tensor<4xf32>) {
    dist.yield %x : tensor<4xf32>
  }
  %1 = dist.stage 1 -> (tensor<4xf32>) {
    // expected-error @+1 {{'arith.addf' op in stage 1 uses a value from outside the stage that no dist.transfer into stage 1 carries}}
    %a = arith.addf %0, %0 : tensor<4xf32>
    dist.yield %a : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}

// -----

func.func @stage_uses_transfer_to_other_stage(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dist.stage 0 -> (tensor<4xf32>) {
    dist.yield %x : tensor<4xf32>
  }
  // expected-note @+1 {{the value is defined here}}
  %t = dist.transfer %0 from stage 0 to stage 2 : tensor<4xf32>
  %1 = dist.stage 1 -> (tensor<4xf32>) {
    // expected-error @+1 {{'arith.addf' op in stage 1 uses a value from outside the stage that no dist.transfer into stage 1 carries}}
    %a = arith.addf %t, %t : tensor<4xf32>
    dist.yield %a : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}

// -----

func.func @transfer_of_argument(%x: tensor<4xf32>) {
  dist.stage 0 {
    dist.yield
  }
  // expected-error @+1 {{'dist.transfer' op must transfer a result of a dist.stage}}
  %t = dist.transfer %x from stage 0 to stage 1 : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'func.func' op 'dist.microbatch_dim' on argument #0 must be an i64 dim of its ranked tensor type}}
func.func @microbatch_dim_out_of_range(%x: tensor<4xf32> {dist.microbatch_dim = 1 : i64}) {
  return
}

// -----

func.func @microbatch_slice_dim(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.microbatch_slice' op dim 2 is out of range for rank 2}}
  %0 = dist.microbatch_slice %x dim 2 of 2 : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @microbatch_slice_count(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dist.microbatch_slice' op count must be positive, got 0}}
  %0 = dist.microbatch_slice %x dim 0 of 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @microbatch_slice_divisible(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'dist.microbatch_slice' op dim 0 of 'tensor<4x8xf32>' is not a static extent divisible by 3}}
  %0 = dist.microbatch_slice %x dim 0 of 3 : tensor<4x8xf32> -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

func.func @microbatch_slice_type(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dist.microbatch_slice' op expected result type 'tensor<2x8xf32>', got 'tensor<4x4xf32>'}}
  %0 = dist.microbatch_slice %x dim 0 of 2 : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @yield_outside_stage() {
  // expected-error @+1 {{'dist.yield' op expects parent op 'dist.stage'}}
  dist.yield
}

//===----------------------------------------------------------------------===//
// dist.stage and dist.pipeline attributes
//===----------------------------------------------------------------------===//

// -----

func.func @stage_attr_not_integer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.stage' must be a non-negative i64 stage index}}
  %0 = arith.addf %x, %x {dist.stage = "first"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @stage_attr_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.stage' must be a non-negative i64 stage index}}
  %0 = arith.addf %x, %x {dist.stage = -1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @stage_attr_i32(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.stage' must be a non-negative i64 stage index}}
  %0 = arith.addf %x, %x {dist.stage = 1 : i32} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'builtin.module' op 'dist.pipeline' must be a #dist.pipeline on a module}}
module attributes {dist.pipeline = {stages = 2 : i64}} {
}

// -----

// expected-error @+1 {{'func.func' op 'dist.pipeline' must be a #dist.pipeline on a module}}
func.func @pipeline_on_func() attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  return
}

// -----

// expected-error @+1 {{pipeline stages must be >= 1, got 0}}
module attributes {dist.pipeline = #dist.pipeline<stages = 0>} {
}

// -----

// expected-error @+1 {{pipeline microbatches must be >= 1, got 0}}
module attributes {dist.pipeline = #dist.pipeline<microbatches = 0>} {
}

// -----

// expected-error @+1 {{pipeline chunks must be >= 1, got -2}}
module attributes {dist.pipeline = #dist.pipeline<chunks = -2>} {
}

// -----

// expected-error @+1 {{pipeline with 2 chunks per rank needs the interleaved schedule, not 1f1b}}
module attributes {dist.pipeline = #dist.pipeline<stages = 2, chunks = 2, schedule = "1f1b">} {
}

// -----

// expected-error @+1 {{pipeline axis name must be non-empty}}
module attributes {dist.pipeline = #dist.pipeline<axis = "", stages = 2>} {
}

// -----

// expected-error @+2 {{for the order in which a pipeline's ranks run the micro-batches, got: zigzag}}
// expected-error @+1 {{failed to parse Dist_PipelineAttr parameter 'schedule'}}
module attributes {dist.pipeline = #dist.pipeline<schedule = zigzag, stages = 2>} {
}

// -----

// expected-error @+1 {{'builtin.module' op 'dist.pipeline' names mesh axis 'pp' that no dist.mesh has}}
module attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 2>} {
  dist.mesh @mesh ["dp" = 2 : inter, "tp" = 4 : intra]
}

// -----

// expected-error @+1 {{'builtin.module' op 'dist.pipeline' has 4 stages but mesh axis 'pp' has size 2}}
module attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 4>} {
  dist.mesh @mesh ["pp" = 2 : inter, "tp" = 4 : intra]
}

// -----

// Two ranks of two chunks: virtual stages 0 to 3.
module attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 2, chunks = 2, schedule = interleaved>} {
  dist.mesh @mesh ["pp" = 2 : inter]
  func.func @stage_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = arith.addf %x, %x {dist.stage = 3 : i64} : tensor<4xf32>
    // expected-error @+1 {{'arith.mulf' op is in stage 4 but the pipeline has 4}}
    %1 = arith.mulf %0, %0 {dist.stage = 4 : i64} : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

module attributes {dist.pipeline = #dist.pipeline<stages = 2, microbatches = 4>} {
  func.func @use_of_later_stage(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = arith.addf %x, %x {dist.stage = 1 : i64} : tensor<4xf32>
    // expected-error @+1 {{'arith.mulf' op in stage 0 uses a value of stage 1}}
    %1 = arith.mulf %0, %x {dist.stage = 0 : i64} : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// A backward op of stage k runs after every forward: stage 0's backward may
// use stage 1's forward and backward, but a forward may not use a backward.
module attributes {dist.pipeline = #dist.pipeline<stages = 2, microbatches = 4>} {
  func.func @forward_uses_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = arith.addf %x, %x {dist.stage = 1 : i64} : tensor<4xf32>
    %1 = arith.mulf %0, %x {dist.backward, dist.stage = 1 : i64} : tensor<4xf32>
    %2 = arith.mulf %1, %0 {dist.backward, dist.stage = 0 : i64} : tensor<4xf32>
    // expected-error @+1 {{'arith.subf' op in stage 1 uses a value of stage 1 (backward)}}
    %3 = arith.subf %1, %x {dist.stage = 1 : i64} : tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}

// -----

func.func @backward_not_unit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.backward' must be a unit attribute}}
  %0 = arith.addf %x, %x {dist.backward = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'dist.accumulator' on argument #0 must be a unit attribute}}
func.func @accumulator_not_unit(%x: tensor<4xf32> {dist.accumulator = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'dist.stage' on argument #0 must be a non-negative i64}}
func.func @argument_stage_negative(%x: tensor<4xf32> {dist.stage = -1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'dist.stage' on result #0 must be a non-negative i64}}
func.func @result_stage_not_integer(%x: tensor<4xf32>) -> (tensor<4xf32> {dist.stage = "last"}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{pipeline updateRounds must be >= 0, got -1}}
module attributes {dist.pipeline = #dist.pipeline<stages = 2, updateRounds = -1>} {
}

// -----

//===----------------------------------------------------------------------===//
// #dist.plan, #dist.buffer, #dist.function, #dist.transfer
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'func.func' op 'dist.plan' must be a #dist.plan on a module}}
func.func @plan_on_func() attributes {dist.plan = 1 : i64} {
  return
}

// -----

// expected-error @+1 {{buffer 'w': a weight, and only a weight, has a value}}
module attributes {test.b = #dist.buffer<role = weight, name = "w", type = tensor<2xf32>, global = tensor<2xf32>>} {}

// -----

// expected-error @+1 {{buffer 'x' must be statically shaped}}
module attributes {test.b = #dist.buffer<role = input, name = "x", type = tensor<?xf32>, global = tensor<?xf32>>} {}

// -----

// expected-error @+1 {{buffer 'x': its local and global types differ in more than their shape}}
module attributes {test.b = #dist.buffer<role = input, name = "x", type = tensor<2xf32>, global = tensor<4xf16>>} {}

// -----

// expected-error @+1 {{buffer 'w': its weight value does not have its global shape}}
module attributes {test.b = #dist.buffer<role = weight, name = "w", type = tensor<2xf32>, global = tensor<4xf32>, weight = dense<1.0> : tensor<2xf32>>} {}

// -----

// expected-error @+1 {{buffer 'x': negative index -1}}
module attributes {test.b = #dist.buffer<role = input, name = "x", type = tensor<2xf32>, global = tensor<2xf32>, index = -1>} {}

// -----

// expected-error @+1 {{buffer 'x': micro-batch dim 1 is not a dim of its type}}
module attributes {test.b = #dist.buffer<role = input, name = "x", type = tensor<2xf32>, global = tensor<2xf32>, microbatch_dim = 1>} {}

// -----

// expected-error @+1 {{plan axes must be #dist.axis attributes}}
module attributes {dist.plan = #dist.plan<axes = [1], buffers = [], functions = [], transfers = []>} {}

// -----

// expected-error @+1 {{plan buffers must be #dist.buffer attributes}}
module attributes {dist.plan = #dist.plan<axes = [], buffers = [1], functions = [], transfers = []>} {}

// -----

// expected-error @+1 {{plan functions must be #dist.function attributes}}
module attributes {dist.plan = #dist.plan<axes = [], buffers = [], functions = [1], transfers = []>} {}

// -----

// expected-error @+1 {{plan transfers must be #dist.transfer attributes}}
module attributes {dist.plan = #dist.plan<axes = [], buffers = [], functions = [#dist.function<symbol = "dnnc_entry", buffers = []>], transfers = [1]>} {}

// -----

// expected-error @+1 {{plan devices must be a permutation of the 2 devices of its axes}}
module attributes {dist.plan = #dist.plan<axes = [#dist.axis<"tp", 2, intra>], devices = [1, 1], buffers = [], functions = [#dist.function<symbol = "dnnc_entry", buffers = []>], transfers = []>} {}

// -----

// expected-error @+1 {{a plan has at least one function}}
module attributes {dist.plan = #dist.plan<axes = [], buffers = [], functions = [], transfers = []>} {}

// -----

// expected-error @+1 {{plan function "dnnc_entry_stage_2" computes stage 2, which the pipeline does not have}}
module attributes {dist.plan = #dist.plan<axes = [], pipeline = #dist.pipeline<stages = 2>, buffers = [], functions = [#dist.function<symbol = "dnnc_entry_stage_2", stage = 2, buffers = []>], transfers = []>} {}

// -----

// expected-error @+1 {{plan function "dnnc_entry" takes a buffer the plan does not have}}
module attributes {dist.plan = #dist.plan<axes = [], buffers = [], functions = [#dist.function<symbol = "dnnc_entry", buffers = [0]>], transfers = []>} {}

// -----

// expected-error @+1 {{plan transfer from stage 1 to stage 0 names a stage or buffer the plan does not have}}
module attributes {dist.plan = #dist.plan<axes = [], pipeline = #dist.pipeline<stages = 2>, buffers = [#dist.buffer<role = activation, name = "t", type = tensor<2xf32>, global = tensor<2xf32>>], functions = [#dist.function<symbol = "dnnc_entry_stage_0", buffers = [0]>], transfers = [#dist.transfer<from = 1, to = 0, source = 0, target = 0>]>} {}
