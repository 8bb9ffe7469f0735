// The WebGPU FFT family's launcher (kernels/fft.cpp, registered by register_fft_kernels).
#pragma once
#include <string>

namespace wgt::webgpu {
// Name of the plan run by this thread's latest FFT launch (FftPlan::name(), e.g.
// "direct 4096 s16.16.16 x1"), empty before the first: tests check which variant ran.
std::string fft_last_plan();
}  // namespace wgt::webgpu
