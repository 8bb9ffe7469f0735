// Host copies of device views by their element span, for the runtime's paths that run a
// call on the CPU without running an op to move its tensors (runtime.cpp, host_spans.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "wgt/runtime.hpp"

namespace wgt {

// The first and last element (storage offsets, in elements) a view of numel > 0 reaches.
std::pair<int64_t, int64_t> element_span(const Tensor& t);

// A device input of an op that runs on the host: the bytes of the view's element span are
// read and the view is rebuilt over them with its own strides (the CPU kernels take any
// strides). Not with to(): compacting a strided view first is an op, which the policy could
// send back here.
Tensor to_host_span(Runtime& rt, const Tensor& t);

// "name(f32[2, 3], ...)": a call as decisions, traces and errors show it.
std::string describe(const OpCall& call);

}  // namespace wgt
