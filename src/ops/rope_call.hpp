// The RoPE call builder shared by rope() (src/ops/nn.cpp), the in-place rope_()
// (src/nn/rope_inplace.cpp) and KVCache::append_rope, so all validate their arguments identically.
#pragma once
#include <cstdint>

#include "wgt/backend.hpp"
#include "wgt/nn.hpp"

namespace wgt {

// Validates x, positions (may be null: positions offset + s) and cfg, naming `name` in every
// error; returns the Rope OpCall without outputs (the contract is in src/ops/nn.cpp).
OpCall rope_call(const Tensor& x, const Tensor* positions, int64_t offset, const RopeConfig& cfg, const char* name);

// Checks RopeConfig::freq_factors f (defined) for a rotation of n_rot dims: f32 (DTypeMismatch),
// [n_rot / 2] (ShapeMismatch), and, for a host f only, every value finite and > 0
// (InvalidArgument). The device is the caller's to check.
void check_rope_freq_factors(const Tensor& f, int64_t n_rot, const char* name);

// True when two logical elements of x may share memory (an expand() view), which an in-place
// rotation must reject (src/nn/rope_inplace.cpp).
bool elements_overlap(const Tensor& x);

}  // namespace wgt
