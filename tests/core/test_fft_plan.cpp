// Plan selection of the WebGPU FFT (src/webgpu/plans/fft_plan.*) without a GPU: which kernel
// runs which length (Stockham for powers of two, the local kernel for the others and under
// the tuning), the radices and workgroup shape of the Stockham stages against the adapter's
// limits, the four-step split and its row tuning, the lines-fastest layout for adjacent lines,
// the constant address math, and every variant's WGSL through the preprocessor.
#include <gtest/gtest.h>

#include "plan_test_support.hpp"

#include "webgpu/plans/fft_plan.hpp"
#include "webgpu/plans/fft_stockham_gen.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using namespace wgt::webgpu;

namespace {

using test::Adapter;
using test::big_gpu;
using test::expect_variant_expands;
using test::webgpu_defaults;
using Kind = OpAttrs::FftKind;

// An FFT call of length n along `axis` of a c64 (f32 for rfft) tensor of shape s; broadcast
// views of one element, so large shapes cost no memory.
OpCall fft_call(const Shape& s, int64_t n, int axis = -1, Kind kind = Kind::Forward) {
  const DType dt = kind == Kind::RealForward ? DType::F32 : DType::C64;
  const Tensor one = Tensor::empty({1}, dt);
  const Tensor x = one.view(Shape(s.size(), 1)).expand(s);
  if (axis < 0) axis += static_cast<int>(s.size());
  Shape os = s;
  os[axis] = kind == Kind::RealForward ? n / 2 + 1 : n;
  OpCall c{OpKind::Fft, "fft", {x}, {}, {}};
  c.out_specs = {{os, kind == Kind::RealInverse ? DType::F32 : DType::C64}};
  c.attrs.axis = axis;
  c.attrs.fft_kind = kind;
  c.attrs.fft_n = n;
  c.attrs.scalar0 = 1.0;
  return c;
}

// The radix-16, complex-exchange Stockham kernel these geometry tests were written for (the
// defaults are radix 8 with the split exchange: FftPlan.DefaultsAreRadix8WithTheSplitExchange).
FftTuning classic() {
  FftTuning t;
  t.radix = 16;
  t.split_exchange = false;
  return t;
}

FftPlan plan_of(const Adapter& a, const OpCall& c, FftTuning t = classic()) {
  Planned<FftPlan> p = plan_fft(a.caps(), t, c);
  EXPECT_TRUE(p.ok()) << p.reject;
  return p.plan;
}

bool is_stockham(const FftStage& s) { return s.shader.kernel == static_cast<uint8_t>(FftKernelKind::Stockham); }

// A Stockham stage's shape is consistent with its length, the adapter and the largest radix
// of the tuning (16 by default; 256 * 16 / max_radix invocations at most).
void expect_stockham_shape(const Adapter& a, const FftStage& st, const std::string& what, uint32_t max_radix = 16) {
  const FftShader& s = st.shader;
  ASSERT_TRUE(is_stockham(st)) << what;
  uint64_t prod = 1;
  for (int i = 0; i < s.np; ++i) {
    EXPECT_LE(s.radix[i], s.radix[0]) << what;  // P points per invocation cover every pass
    EXPECT_EQ(s.radix[0] % s.radix[i], 0) << what;
    prod *= s.radix[i];
  }
  EXPECT_EQ(prod, s.len) << what;
  EXPECT_EQ(s.radix[0], std::min<uint32_t>(max_radix, s.len)) << what;
  EXPECT_EQ(s.wg, s.lines * (s.len / s.radix[0])) << what;
  EXPECT_LE(s.wg, std::min<uint32_t>(256 * 16 / max_radix, a.l.max_compute_invocations_per_workgroup)) << what;
  const uint64_t sm = s.np > 1 ? uint64_t{s.lines} * s.len * (s.split ? 4 : 8) : 0;
  EXPECT_EQ(s.swizzle, s.np > 1) << what;
  EXPECT_LE(sm, a.l.max_compute_workgroup_storage_size) << what;
  expect_variant_expands(st.variant(), what);
}

TEST(FftPlan, StockhamRadices) {
  EXPECT_EQ(fft_stockham_radices(2), (std::vector<uint32_t>{2}));
  EXPECT_EQ(fft_stockham_radices(16), (std::vector<uint32_t>{16}));
  EXPECT_EQ(fft_stockham_radices(128), (std::vector<uint32_t>{16, 8}));
  EXPECT_EQ(fft_stockham_radices(512), (std::vector<uint32_t>{16, 16, 2}));
  EXPECT_EQ(fft_stockham_radices(4096), (std::vector<uint32_t>{16, 16, 16}));
  EXPECT_TRUE(fft_stockham_radices(1).empty());
  EXPECT_TRUE(fft_stockham_radices(12).empty());
  // A smaller largest radix (WGT_FFT_RADIX); other values mean 16.
  EXPECT_EQ(fft_stockham_radices(4096, 8), (std::vector<uint32_t>{8, 8, 8, 8}));
  EXPECT_EQ(fft_stockham_radices(512, 4), (std::vector<uint32_t>{4, 4, 4, 4, 2}));
  EXPECT_EQ(fft_stockham_radices(4, 8), (std::vector<uint32_t>{4}));
  EXPECT_EQ(fft_stockham_radices(256, 5), (std::vector<uint32_t>{16, 16}));
}

// WGT_FFT_RADIX: 8 or 4 points per invocation run a 4096-point line on 512 or 1024
// invocations where the adapter allows them (else the local kernel runs: no other radix is
// tried), every shape consistent with the adapter.
TEST(FftPlan, StockhamRadixTuning) {
  const Adapter a = big_gpu();
  FftTuning t = classic();
  t.radix = 8;
  FftPlan p = plan_of(a, fft_call({8192, 4096}, 4096), t);
  EXPECT_EQ(p.name(), "direct 4096 s8.8.8.8 x1");
  EXPECT_EQ(p.stages[0].shader.wg, 512);
  expect_stockham_shape(a, p.stages[0], "radix 8", 8);
  t.radix = 4;
  p = plan_of(a, fft_call({8192, 4096}, 4096), t);
  EXPECT_EQ(p.name(), "direct 4096 s4.4.4.4.4.4 x1");
  EXPECT_EQ(p.stages[0].shader.wg, 1024);
  expect_stockham_shape(a, p.stages[0], "radix 4", 4);
  for (int64_t n = 2; n <= 4096; n *= 2)
    expect_stockham_shape(a, plan_of(a, fft_call({3, n}, n), t).stages[0], "radix 4, n " + std::to_string(n), 4);
  // The four-step stages take the tuning too.
  const FftPlan f = plan_of(a, fft_call({2, 1 << 20}, 1 << 20), t);
  ASSERT_EQ(f.stages.size(), 2u);
  for (const FftStage& st : f.stages) EXPECT_EQ(st.shader.radix[0], 4);
  Adapter small = a;
  small.l.max_compute_invocations_per_workgroup = 256;
  EXPECT_FALSE(is_stockham(plan_of(small, fft_call({3, 4096}, 4096), t).stages[0]));
}

// WGT_FFT_EXCHANGE=split: exchanges through f32 workgroup memory (half the bytes: the shape
// check above); one-pass lines have no exchange and stay unsplit; the name says it; a
// different pipeline (the key) from the complex exchange; the four-step stages take it too.
TEST(FftPlan, StockhamSplitExchange) {
  Adapter a = big_gpu();
  FftTuning t = classic();
  t.split_exchange = true;
  const FftPlan p = plan_of(a, fft_call({8192, 4096}, 4096), t);
  EXPECT_EQ(p.name(), "direct 4096 s16.16.16 x1 split");
  EXPECT_EQ(p.stages[0].shader.split, 1);
  expect_stockham_shape(a, p.stages[0], "split");
  EXPECT_FALSE(p.stages[0].key() == plan_of(a, fft_call({8192, 4096}, 4096)).stages[0].key());
  EXPECT_EQ(plan_of(a, fft_call({3, 16}, 16), t).stages[0].shader.split, 0);  // one pass: nothing to exchange
  const FftPlan f = plan_of(a, fft_call({2, 1 << 20}, 1 << 20), t);
  for (const FftStage& st : f.stages) EXPECT_EQ(st.shader.split, 1);
  expect_variant_expands(p.stages[0].variant(), "split 4096");
}

// The defaults (FftTuning{}, the settings' defaults): 8 points per invocation and the split
// exchange, for every Stockham stage: direct, four-step and Bluestein.
TEST(FftPlan, DefaultsAreRadix8WithTheSplitExchange) {
  const Adapter a = big_gpu();
  const FftTuning d;
  EXPECT_EQ(plan_of(a, fft_call({8192, 4096}, 4096), d).name(), "direct 4096 s8.8.8.8 x1 split");
  EXPECT_EQ(plan_of(a, fft_call({8192, 4096}, 4096), d).stages[0].shader.wg, 512);
  for (const FftStage& st : plan_of(a, fft_call({2, 1 << 20}, 1 << 20), d).stages) {
    EXPECT_EQ(st.shader.radix[0], 8);
    EXPECT_EQ(st.shader.split, 1);
  }
  const FftPlan b = plan_of(a, fft_call({3, 1009}, 1009), d);
  EXPECT_EQ(b.stages[0].shader.radix[0], 8) << b.name();
  EXPECT_EQ(b.stages[0].shader.split, 1) << b.name();
  EXPECT_EQ(webgpu::kernel_tuning_from_settings().fft.split_exchange, true);
  EXPECT_FALSE(webgpu::kernel_tuning_from_settings().fft.radix.has_value());  // unset: kFftDefaultRadix
}

TEST(FftPlan, PowersOfTwoRunOnStockhamEveryLength) {
  for (const Adapter& a : {big_gpu(), webgpu_defaults()}) {
    const uint32_t lmax = fft_max_local(a.l);
    for (int64_t n = 2; n <= lmax; n *= 2) {
      const std::string what = "n " + std::to_string(n) + " storage " + std::to_string(a.l.max_compute_workgroup_storage_size);
      const FftPlan p = plan_of(a, fft_call({7, n}, n));
      EXPECT_EQ(p.algo, FftAlgo::Direct) << what;
      ASSERT_EQ(p.stages.size(), 1u) << what;
      expect_stockham_shape(a, p.stages[0], what);
      // A last-axis transform: one line after another, no division in the addresses.
      EXPECT_EQ(p.stages[0].shader.load_lf, 0) << what;
      EXPECT_EQ(p.stages[0].shader.cols, 1) << what;
      EXPECT_EQ(p.stages[0].shader.bin1, 1) << what;
      EXPECT_GE(p.stages[0].shader.wg, 64) << what;  // short lines are grouped
      EXPECT_EQ(p.name().substr(0, 7), "direct ") << what;
    }
  }
  // 4096 on the H200-like adapter: one line of 256 invocations, three radix-16 passes.
  const FftPlan p = plan_of(big_gpu(), fft_call({8192, 4096}, 4096));
  EXPECT_EQ(p.name(), "direct 4096 s16.16.16 x1");
  EXPECT_EQ(p.stages[0].shader.wg, 256);
}

TEST(FftPlan, LocalKernelForOtherLengthsAndUnderTheTuning) {
  const Adapter a = big_gpu();
  for (int64_t n : {12, 1000, 2187}) EXPECT_FALSE(is_stockham(plan_of(a, fft_call({3, n}, n)).stages[0])) << n;
  FftTuning local = classic();
  local.kernel = FftKernel::Local;
  for (int64_t n : {2, 64, 4096}) {
    const FftPlan p = plan_of(a, fft_call({3, n}, n), local);
    EXPECT_FALSE(is_stockham(p.stages[0])) << n;
    expect_variant_expands(p.stages[0].variant(), "local " + std::to_string(n));
  }
  // Bluestein follows the same choice (its convolution length is a power of two).
  const FftPlan b = plan_of(a, fft_call({3, 1009}, 1009));
  EXPECT_EQ(b.algo, FftAlgo::Bluestein);
  EXPECT_EQ(b.m, 2048u);
  expect_stockham_shape(a, b.stages[0], "bluestein");
  EXPECT_EQ(b.stages[0].shader.blue, 1);
  EXPECT_FALSE(is_stockham(plan_of(a, fft_call({3, 1009}, 1009), local).stages[0]));
}

TEST(FftPlan, AdjacentLinesWalkLinesFastest) {
  const Adapter a = big_gpu();
  // Axis 0 of [n, 5]: the lines are 1 apart, the axis stride is 5.
  for (int64_t n : {16, 256, 4096}) {
    const FftPlan p = plan_of(a, fft_call({n, 5}, n, 0));
    const FftShader& s = p.stages[0].shader;
    expect_stockham_shape(a, p.stages[0], "axis 0 " + std::to_string(n));
    EXPECT_EQ(s.load_lf, s.lines > 1) << n;
    EXPECT_EQ(s.store_lf, s.load_lf) << n;
    EXPECT_EQ(s.bin1, 0) << n;  // the inner batch group has 5 lines: runtime division
    if (n == 256) {
      EXPECT_EQ(s.lines, 16) << n;  // 128-byte runs per global access
    }
    if (n == 16) {
      EXPECT_EQ(s.lines, 64) << n;  // and at least 64 invocations
    }
  }
}

TEST(FftPlan, FourStepSplitAndRowTuning) {
  const Adapter a = big_gpu();
  const OpCall c = fft_call({32, int64_t{1} << 20}, int64_t{1} << 20);
  // Rows of 1024 (the split measured fastest), columns of 1024 read 4 adjacent a time.
  FftPlan p = plan_of(a, c);
  ASSERT_EQ(p.algo, FftAlgo::FourStep);
  EXPECT_EQ(p.n1, 1024u);
  EXPECT_EQ(p.n2, 1024u);
  ASSERT_EQ(p.stages.size(), 2u);
  expect_stockham_shape(a, p.stages[0], "columns");
  expect_stockham_shape(a, p.stages[1], "rows");
  EXPECT_EQ(p.stages[0].shader.twiddle, 1);
  EXPECT_EQ(p.stages[0].shader.lines, 4);  // 1024-long columns: 4 per workgroup
  EXPECT_EQ(p.stages[0].shader.load_lf, 1);
  EXPECT_EQ(p.stages[0].shader.cols, 1024);
  EXPECT_EQ(p.stages[1].shader.cols, 1024);
  EXPECT_EQ(p.stages[1].shader.twiddle, 0);
  // The row length is tunable, clamped to what the device and n allow (n1 <= 4096 too).
  for (auto [row, n2] : {std::pair<uint32_t, uint64_t>{2048, 2048}, {64, 256}, {4096, 4096}}) {
    FftTuning t = classic();
    t.row = row;
    p = plan_of(a, c, t);
    EXPECT_EQ(p.n2, n2) << row;
    EXPECT_EQ(p.n1 * p.n2, uint64_t{1} << 20) << row;
    expect_stockham_shape(a, p.stages[0], "columns row " + std::to_string(row));
    expect_stockham_shape(a, p.stages[1], "rows row " + std::to_string(row));
  }
  // WebGPU's default 16 KiB of workgroup memory: one-workgroup lines up to 2048.
  const Adapter d = webgpu_defaults();
  p = plan_of(d, fft_call({2, 4096}, 4096));
  EXPECT_EQ(p.algo, FftAlgo::FourStep);
  EXPECT_EQ(p.n2, 1024u);
  for (const FftStage& s : p.stages) expect_stockham_shape(d, s, "defaults 4096");
  // Non-powers of two keep the square split on the local kernel.
  p = plan_of(a, fft_call({2, 3 * 4096}, 3 * 4096));
  EXPECT_EQ(p.algo, FftAlgo::FourStep);
  EXPECT_FALSE(is_stockham(p.stages[0]));
  EXPECT_EQ(p.n1, 96u);
  EXPECT_EQ(p.n2, 128u);
}

TEST(FftPlan, RealTransformsAndShaderKeys) {
  const Adapter a = big_gpu();
  const FftPlan r = plan_of(a, fft_call({3, 1024}, 1024, -1, Kind::RealForward));
  expect_stockham_shape(a, r.stages[0], "rfft");
  EXPECT_EQ(r.stages[0].shader.in_mode, static_cast<uint8_t>(FftIn::Real));
  const FftPlan h = plan_of(a, fft_call({3, 513}, 1024, -1, Kind::RealInverse));
  expect_stockham_shape(a, h.stages[0], "irfft");
  EXPECT_EQ(h.stages[0].shader.out_real, 1);
  // Different shaders, different pipeline keys; the same shader, the same key.
  EXPECT_NE(r.stages[0].key(), h.stages[0].key());
  FftTuning local = classic();
  local.kernel = FftKernel::Local;
  EXPECT_NE(r.stages[0].key(), plan_of(a, fft_call({3, 1024}, 1024, -1, Kind::RealForward), local).stages[0].key());
  EXPECT_EQ(r.stages[0].key(), plan_of(a, fft_call({9, 1024}, 1024, -1, Kind::RealForward)).stages[0].key());
}

}  // namespace
