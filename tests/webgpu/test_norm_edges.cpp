// RMSNorm on rows that overflow a plain f32 sum of squares, and rows with inf / NaN / zeros /
// tiny values, against the CPU reference (docs/semantics.md): the device kernels (the vec4
// row kernel for contiguous rows of a multiple of 4, the general kernel otherwise) scale the
// sum of squares by max|x|, so rms_norm([3e19, 1, 1, 1]) is [2, 6.7e-20, ...], not zeros.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "conformance.hpp"

namespace wgt::conformance {
namespace {

TEST(WebGpuNormEdges, RmsNormHugeAndSpecialRows) {
  std::string why;
  DeviceBackend* gpu = gpu_backend(&why);
  ASSERT_NE(gpu, nullptr) << "WebGPU adapter required: " << why;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> rows4 = {3e19, 1, 1, 1,  3e38, -3e38, 1, 2,  inf, 1, 2, 3,   nan, 1, 2, 3,
                                     0, 0, 0, 0,     1e-20, 2e-20, 0, 1e-20,  1, 2, 3, 4,  -inf, inf, 0, 5,
                                     -2e19, 5e18, 1e19, -7};
  int ran = 0;
  for (int64_t d : {4, 8, 36, 37})
    for (View v : {View::Contiguous, View::Sliced})
      for (bool weight : {false, true}) {
        Case c{"rms_norm_edge/d" + std::to_string(d) + (v == View::Sliced ? "/sliced" : "") + (weight ? "/w" : ""),
               OpKind::RMSNorm, "rms_norm"};
        c.attrs.eps = 1e-6;
        c.attrs.has_weight = weight;
        c.inputs = {{{9, d}, DType::F32, v}};
        c.inputs[0].values = rows4;
        if (weight) c.inputs.push_back({{d}, DType::F32, View::Contiguous, 0.5, 2.0});
        c.out_shape = {9, d};
        c.tol = {1e-10, 1e-30, 1e-5};
        if (!selected(c.name)) continue;
        Result r = run(c, *gpu);
        EXPECT_TRUE(r.ran) << c.name << ": " << r.message;
        EXPECT_TRUE(!r.ran || r.ok) << c.name << ": " << r.message;
        ++ran;
      }
  std::printf("[conformance] %d case(s) run\n", ran);
}

// LayerNorm on rows whose mean or variance overflow f32 (|x| ~ 1e19 and up, 1e38 of both
// signs) and rows with inf / NaN / zeros / tiny values, against the CPU reference: the device
// kernels (vec4 row kernel for contiguous rows of a multiple of 4, the general one otherwise)
// take the statistics of x / max|x|, so layer_norm([1e38, -1e38, 0]) is [1.22, -1.22, 0].
TEST(WebGpuNormEdges, LayerNormHugeAndSpecialRows) {
  std::string why;
  DeviceBackend* gpu = gpu_backend(&why);
  ASSERT_NE(gpu, nullptr) << "WebGPU adapter required: " << why;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> rows4 = {3e19, 1, 1, 1,  1e38, -1e38, 0, 0,  3e38, 3e38, -3e38, 2,  inf, 1, 2, 3,
                                     nan, 1, 2, 3,   0, 0, 0, 0,  1e-20, 2e-20, 0, 1e-20,  1, 2, 3, 4,
                                     -2e19, 5e18, 1e19, -7,  1e30, 1e30, 1e30, 1e30};
  const std::vector<double> rows3 = {1e38, -1e38, 0,  3e19, 1, 1,  -3e38, 3e38, 3e38,  1, 2, 4};
  int ran = 0;
  for (int64_t d : {3, 4, 8, 36, 37})
    for (View v : {View::Contiguous, View::Sliced})
      for (int affine = 0; affine < 2; ++affine) {
        Case c{"layer_norm_edge/d" + std::to_string(d) + (v == View::Sliced ? "/sliced" : "") + (affine ? "/wb" : ""),
               OpKind::LayerNorm, "layer_norm"};
        c.attrs.eps = 1e-5;
        c.attrs.has_weight = c.attrs.has_bias = affine != 0;
        c.inputs = {{{10, d}, DType::F32, v}};
        c.inputs[0].values = d == 3 ? rows3 : rows4;
        if (affine) {
          c.inputs.push_back({{d}, DType::F32, View::Contiguous, 0.5, 2.0});
          c.inputs.push_back({{d}, DType::F32, View::Contiguous, -1.0, 1.0});
        }
        c.out_shape = {10, d};
        c.tol = {1e-10, 1e-5, 1e-5};
        if (!selected(c.name)) continue;
        Result r = run(c, *gpu);
        EXPECT_TRUE(r.ran) << c.name << ": " << r.message;
        EXPECT_TRUE(!r.ran || r.ok) << c.name << ": " << r.message;
        ++ran;
      }
  std::printf("[conformance] %d case(s) run\n", ran);
}

}  // namespace
}  // namespace wgt::conformance
