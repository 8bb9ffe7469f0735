// Softmax, log_softmax and attention on NaN / inf / fully masked rows against the CPU
// reference (docs/semantics.md): a NaN or +inf logit (score) makes its row NaN, a row of -inf
// logits is NaN for softmax but 0 for attention (documented), -inf entries of an ordinary row
// weigh 0, and a NaN in v at a key of weight 0 stays out of the output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

using namespace conformance;

TEST(WebGpuSoftmaxEdges, SpecialRows) {
  std::string why;
  DeviceBackend* gpu = gpu_backend(&why);
  ASSERT_NE(gpu, nullptr) << "WebGPU adapter required: " << why;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> rows4 = {-inf, -inf, -inf, -inf,  nan, 1, 2, 3,  inf, 1, 2, 3,  -inf, 1, 2, -inf,
                                     1e30, -1e30, 0, 1,  3e38, 3e38, -3e38, 0,  0, 0, 0, 0,  1, 2, 3, 4,
                                     inf, inf, -inf, 0,  -inf, 5, -inf, -inf};
  int ran = 0;
  for (OpKind kind : {OpKind::Softmax, OpKind::LogSoftmax})
    for (int64_t d : {4, 8, 37})
      for (View v : {View::Contiguous, View::Sliced})
        for (DType dt : {DType::F32, DType::F16}) {
          const std::string op = kind == OpKind::Softmax ? "softmax" : "log_softmax";
          Case c{op + "_edge/d" + std::to_string(d) + (v == View::Sliced ? "/sliced" : "") + "/" + dtype_name(dt), kind,
                 op};
          c.attrs.axis = 1;
          c.inputs = {{{10, d}, dt, v}};
          c.inputs[0].values = rows4;
          c.out_shape = {10, d};
          c.out_dtype = dt;
          if (dt == DType::F16) c.tol = {1e-6, 1e-3, 2e-3};
          if (!selected(c.name)) continue;
          Result r = run(c, *gpu);
          EXPECT_TRUE(r.ran) << c.name << ": " << r.message;
          EXPECT_TRUE(!r.ran || r.ok) << c.name << ": " << r.message;
          ++ran;
        }
  std::printf("[conformance] %d case(s) run\n", ran);
}

const Device kGpu = Device::webgpu(0);

std::vector<float> randv(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = nd(rng);
  return v;
}

class WebGpuAttentionEdges : public testing::WebGpuTest {
 protected:
  // q [lq, 4, 64], k/v [lk, 2, 64], causal, with a mask [lq, lk]. Row 0: a NaN in q at head 0
  // (that head's row NaN, the others finite); row 1: a NaN mask entry (all heads NaN); row 2:
  // fully masked (zeros); row 3: a +inf mask entry (NaN); the last key's k has a NaN at kv head 1
  // (NaN for the queries that see it, heads 2 and 3); key 2 is masked everywhere and its v
  // holds a NaN (weight 0: no effect).
  void check(int64_t lq, int64_t lk, DType kv_dt, const std::string& what) {
    const int64_t H = 4, Hkv = 2, D = 64;
    std::vector<float> q = randv(lq * H * D, 1), k = randv(lk * Hkv * D, 2), v = randv(lk * Hkv * D, 3);
    std::vector<float> m(static_cast<size_t>(lq * lk), 0.f);
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    q[5] = nan;
    k[((lk - 1) * Hkv + 1) * D + 9] = nan;
    v[(2 * Hkv + 0) * D + 7] = nan;
    for (int64_t i = 0; i < lq; ++i) m[i * lk + 2] = -inf;
    if (lq > 1) m[1 * lk + 1] = nan;
    if (lq > 2) for (int64_t j = 0; j < lk; ++j) m[2 * lk + j] = -inf;
    if (lq > 3) m[3 * lk + 0] = inf;
    const Tensor tq = Tensor::from_vector(q, {lq, H, D});
    const Tensor tk = cast(Tensor::from_vector(k, {lk, Hkv, D}), kv_dt), tv = cast(Tensor::from_vector(v, {lk, Hkv, D}), kv_dt);
    const Tensor tm = Tensor::from_vector(m, {lq, lk});
    use_cpu_reference();
    const auto want = attention(tq, tk, tv, AttnConfig{0.0, true, tm}).to_vector<float>();
    use_gpu();
    const auto got = attention(tq.to(kGpu), tk.to(kGpu), tv.to(kGpu), AttnConfig{0.0, true, tm.to(kGpu)}).cpu().to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    int nans = 0, zeros = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const std::string at = what + " lq " + std::to_string(lq) + " lk " + std::to_string(lk) + " element " + std::to_string(i);
      if (std::isnan(want[i])) {
        ++nans;
        EXPECT_TRUE(std::isnan(got[i])) << at << ": got " << got[i];
      } else {
        zeros += want[i] == 0.f;
        EXPECT_NEAR(got[i], want[i], 2e-3 * (1 + std::fabs(want[i]))) << at;
      }
    }
    // The cases really are there: NaN rows, and (with a fully masked row) zero rows.
    EXPECT_GE(nans, D) << what;
    if (lq > 2) {
      EXPECT_GE(zeros, H * D) << what;
    }
  }
};

TEST_F(WebGpuAttentionEdges, PrefillNanRowsAndMaskedRows) {
  check(6, 9, DType::F32, "prefill");
  check(20, 40, DType::F16, "prefill f16 kv");
}

TEST_F(WebGpuAttentionEdges, DecodeNanRowsAndMaskedRowsBothKernels) {
  for (const char* kernel : {"sg", "split"}) {
    setenv("WGT_ATTN_DECODE_KERNEL", kernel, 1);
    setenv("WGT_ATTN_DECODE_CHUNK", "32", 1);  // several splits for the merge pass
    for (int64_t lq : {1, 4})
      for (int64_t lk : {9, 100}) check(lq, lk, lk == 9 ? DType::F32 : DType::F16, kernel);
  }
  unsetenv("WGT_ATTN_DECODE_KERNEL");
  unsetenv("WGT_ATTN_DECODE_CHUNK");
}

}  // namespace
}  // namespace wgt
