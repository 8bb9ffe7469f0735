// rope_: RoPE written into x's own storage (OpKind::Rope with no outputs, contract in
// src/ops/nn.cpp), declared to write x (OpCall::mutates) so that the runtime runs it where x
// lives and never on a moved copy: the CPU kernel for a host x; the WebGPU kernel
// (rope_inplace.wgsl, which writes through x's strides) for a device x when the backend
// supports the call; else (policy cpu-only, or a fallback) the runtime's host round trip,
// which reads the view's byte span, rotates it on the CPU and writes the span back.
#include <algorithm>
#include <cstdlib>

#include "ops/op_common.hpp"
#include "ops/rope_call.hpp"
#include "wgt/nn.hpp"

namespace wgt {
using namespace ops_detail;

// Rotating a pair reads both elements and writes both, so two logical elements sharing one
// memory location would be rotated twice (or raced on the GPU). Sufficient test for "no
// overlap": ordered by stride, each dim's stride exceeds the span of all smaller-stride dims
// (exact for every view the Tensor API makes: permutes and slices pass, expand() fails).
bool elements_overlap(const Tensor& x) {
  std::vector<int> dims;
  for (int d = 0; d < x.dim(); ++d)
    if (x.shape()[d] > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(),
            [&](int a, int b) { return std::llabs(x.strides()[a]) < std::llabs(x.strides()[b]); });
  int64_t span = 0;  // max element distance covered by the dims seen so far
  for (int d : dims) {
    const int64_t s = std::llabs(x.strides()[d]);
    if (s <= span) return true;
    span += s * (x.shape()[d] - 1);
  }
  return false;
}

namespace {

void rope_inplace(Tensor& x, const Tensor* positions, int64_t offset, const RopeConfig& cfg) {
  const char* name = "rope_";
  OpCall call = rope_call(x, positions, offset, cfg, name);
  if (elements_overlap(x))
    throw_error(ErrorKind::InvalidArgument, name,
                "x " + x.str() + " has elements sharing memory (strides " + shape_str(x.strides()) +
                    ", e.g. an expand() view); rotate a contiguous() copy, or use rope()");
  if (positions && positions->storage() == x.storage())
    throw_error(ErrorKind::InvalidArgument, name, "positions share x's storage, which rope_ overwrites; pass a separate tensor");
  if (cfg.freq_factors.defined() && cfg.freq_factors.storage() == x.storage())
    throw_error(ErrorKind::InvalidArgument, name, "freq_factors share x's storage, which rope_ overwrites; pass a separate tensor");
  if (x.numel() == 0) return;
  call.mutates = 1u;  // x: the runtime runs the call where x lives, on x itself
  Runtime::get().run(call, {}, x.device());
}

}  // namespace

void rope_(Tensor& x, int64_t offset, const RopeConfig& cfg) { rope_inplace(x, nullptr, offset, cfg); }
void rope_(Tensor& x, const Tensor& positions, const RopeConfig& cfg) { rope_inplace(x, &positions, 0, cfg); }

}  // namespace wgt
