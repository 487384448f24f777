//===- ClusterTest.cpp - unit tests (issue 5, being written) -*- C++ -*-===//

#include <gtest/gtest.h>
