//===- Cluster.cpp ---------------------------------------------*- C++ -*-===//
//
// Part of the dnnc project. Being written (issue 5).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Cluster.h"
