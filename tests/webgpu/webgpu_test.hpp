// Base fixture of the WebGPU test suites: the binary needs a real adapter (a missing one is a
// failure, never a skip), and every test leaves the runtime policy as it found it.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "wgt/webgpu_info.hpp"
#include "wgt/wgt.hpp"

namespace wgt::testing {

class WebGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(webgpu_available(&why)) << "WebGPU adapter required: " << why;
    saved_ = Runtime::get().policy();
  }
  void TearDown() override { Runtime::get().set_policy(saved_); }

  // CPU reference kernels only: the oracle.
  void use_cpu_reference() {
    Policy p = saved_;
    p.mode = PolicyMode::CpuOnly;
    p.cpu_mode = CpuMode::Reference;
    Runtime::get().set_policy(p);
  }
  // No fallback: a kernel that cannot run raises Unsupported instead of silently using the CPU.
  void use_gpu() {
    Policy p = saved_;
    p.mode = PolicyMode::Auto;
    p.allow_fallback = false;
    Runtime::get().set_policy(p);
  }

  Policy saved_;
};

// The f16 -> f32 subgroup-matrix shape {M, N, K} the tensor-core kernels take on adapter 0, in
// the plan's order of preference (plans/matmul_plan.cpp sgmat_shape): 16x16x16 or 16x8x16 on
// NVIDIA under Debian's Dawn, 8x8x8 on sid's lavapipe; {0, 0, 0} without one. Read from `wgt
// info`'s list, not from the plans, so the tests do not take the plans' word for it.
inline std::array<int64_t, 3> f16_matrix_shape() {
  std::string why;
  for (const WebGPUInfo& i : webgpu_adapters(&why)) {
    if (i.index != 0) continue;
    for (const char* want : {"f16->f32 16x16x16", "f16->f32 16x8x16", "f16->f32 8x8x8"})
      for (const std::string& c : i.subgroup_matrix_configs)
        if (c == want) {
          long m = 0, n = 0, k = 0;
          std::sscanf(want, "f16->f32 %ldx%ldx%ld", &m, &n, &k);
          return {m, n, k};
        }
  }
  return {0, 0, 0};
}

// Whether adapter 0 offers such a shape: there those kernels must run, elsewhere the tests
// check the fallback.
inline bool adapter_has_f16_matrices() { return f16_matrix_shape()[0] != 0; }

// Early submission (set_webgpu_early_batch) off for a scope: a test that counts the
// submissions or passes of a sequence of ops checks the batch limit and the reads, which an
// idle device would otherwise pre-empt by taking each group of early_batch dispatches at once.
class NoEarlySubmission {
 public:
  explicit NoEarlySubmission(int device = 0) : device_(device), saved_(webgpu_batch_stats(device).early_batch) {
    set_webgpu_early_batch(0, device_);
  }
  ~NoEarlySubmission() { set_webgpu_early_batch(saved_, device_); }
  NoEarlySubmission(const NoEarlySubmission&) = delete;
  NoEarlySubmission& operator=(const NoEarlySubmission&) = delete;

 private:
  int device_;
  uint32_t saved_;
};

}  // namespace wgt::testing
