// Conformance of the WebGPU matmul kernels (kernels/matmul.cpp) against the CPU reference
// backend (f64): odd and edge sizes, broadcast batches, transposed/strided views, K=0, empty M, large
// values, f32 and f16, guard regions around an output that starts at a nonzero offset.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <optional>
#include <tuple>
#include <cstdlib>
#include <cstring>
#include <random>

#include "matmul_check.hpp"
#include "settings_env.hpp"
#include "webgpu/kernels/matmul.hpp"
#include "webgpu/plans/tuning.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const int64_t kSizes[] = {1, 3, 17, 64, 65, 127, 130};

TEST(WebGpuMatmul, F32AllSizeMixes) {
  REQUIRE_GPU(gpu);
  uint32_t seed = 1;
  for (int64_t M : kSizes)
    for (int64_t N : kSizes)
      for (int64_t K : kSizes) {
        if (M * N * K > 130 * 130 * 17 && (M + N + K) % 3) continue;  // keep lavapipe time bounded
        Tensor a = random_gpu({M, K}, DType::F32, seed++);
        Tensor b = random_gpu({K, N}, DType::F32, seed++);
        check_matmul(gpu, a, b, false);
        Tensor bt = random_gpu({N, K}, DType::F32, seed++);
        check_matmul(gpu, a, bt, true);
        if (HasFatalFailure()) return;
      }
}

TEST(WebGpuMatmul, SmallMUsesGemvBothLayouts) {
  REQUIRE_GPU(gpu);
  uint32_t seed = 100;
  for (int64_t M : {1, 2, 3, 4})
    for (int64_t N : {1, 17, 130})
      for (int64_t K : {1, 65, 300}) {
        Tensor a = random_gpu({M, K}, DType::F32, seed++);
        EXPECT_EQ(check_matmul(gpu, a, random_gpu({K, N}, DType::F32, seed++), false).rfind("gemv", 0), 0u);
        EXPECT_EQ(check_matmul(gpu, a, random_gpu({N, K}, DType::F32, seed++), true).rfind("gemv", 0), 0u);
        if (HasFatalFailure()) return;
      }
}

TEST(WebGpuMatmul, BroadcastBatches) {
  REQUIRE_GPU(gpu);
  struct C { Shape a, b; bool tb; };
  const C cases[] = {
      {{2, 3, 17, 9}, {3, 9, 5}, false},          // b broadcast over the leading dim
      {{1, 4, 5, 6}, {2, 1, 6, 7}, false},        // both sides broadcast
      {{2, 3, 2, 2, 5, 6}, {1, 3, 1, 2, 6, 65}, false},  // 4 unmergeable batch dims: host loop
      {{3, 2, 65, 33}, {33, 17}, false},          // 2-D b shared by every batch
      {{5, 1, 70}, {5, 40, 70}, true},            // decode-style batched matmul_t
      {{2, 2, 4, 66, 8}, {2, 1, 1, 20, 8}, true},
  };
  uint32_t seed = 200;
  for (const C& c : cases) {
    check_matmul(gpu, random_gpu(c.a, DType::F32, seed), random_gpu(c.b, DType::F32, seed + 1), c.tb);
    seed += 2;
    if (HasFatalFailure()) return;
  }
}

TEST(WebGpuMatmul, TransposedAndStridedViews) {
  REQUIRE_GPU(gpu);
  // A plain transposed view of b is read through its strides (K-contiguous mapping, no copy).
  Tensor w = random_gpu({65, 130}, DType::F32, 300);  // [N, K]
  Tensor a = random_gpu({17, 130}, DType::F32, 301);
  std::string v = check_matmul(gpu, a, w.t(), false);
  EXPECT_NE(v.find("b:k"), std::string::npos) << v;
  // matmul_t on a transposed view ([K, N] storage seen as [N, K]) reads N-contiguous.
  Tensor kn = random_gpu({130, 65}, DType::F32, 302);
  v = check_matmul(gpu, a, kn.t(), true);
  EXPECT_NE(v.find("b:n"), std::string::npos) << v;
  // Transposed a ([K, M] storage) is read M-contiguous.
  Tensor km = random_gpu({130, 17}, DType::F32, 303);
  v = check_matmul(gpu, km.t(), random_gpu({130, 64}, DType::F32, 304), false);
  EXPECT_NE(v.find("a:m"), std::string::npos) << v;
  // Views with an element offset, and a broadcast (expanded) b with batch stride 0.
  Tensor big = random_gpu({3, 40, 33}, DType::F32, 307);
  check_matmul(gpu, big.select(0, 1).slice(0, 5, 25), random_gpu({33, 9}, DType::F32, 308), false);
  Tensor b2 = random_gpu({33, 9}, DType::F32, 309);
  check_matmul(gpu, big, b2.unsqueeze(0).expand({3, 33, 9}), false);
}

TEST(WebGpuMatmul, StridedViewIsCompacted) {
  REQUIRE_GPU(gpu);
  // Neither matrix stride unit (step-2 slices): Context::compact() first, still correct.
  Tensor wide = random_gpu({34, 260}, DType::F32, 305);
  check_matmul(gpu, wide.slice(0, 0, 34, 2).slice(1, 0, 260, 2), random_gpu({130, 3}, DType::F32, 306), false);
}

TEST(WebGpuMatmul, EmptyAndZeroK) {
  REQUIRE_GPU(gpu);
  // K = 0: every output is 0 (and written, unlike the sentinel around it).
  for (int64_t M : {1, 5, 70})
    for (bool tb : {false, true}) {
      Tensor a = random_gpu({M, 0}, DType::F32, 400);
      Tensor b = tb ? random_gpu({9, 0}, DType::F32, 401) : random_gpu({0, 9}, DType::F32, 401);
      check_matmul(gpu, a, b, tb);
    }
  // Empty M / N / batch: nothing written, guards intact.
  check_matmul(gpu, random_gpu({0, 7}, DType::F32, 402), random_gpu({7, 5}, DType::F32, 403), false);
  check_matmul(gpu, random_gpu({4, 7}, DType::F32, 404), random_gpu({7, 0}, DType::F32, 405), false);
  check_matmul(gpu, random_gpu({0, 4, 7}, DType::F32, 406), random_gpu({7, 5}, DType::F32, 407), false);
}

TEST(WebGpuMatmul, LargeValues) {
  REQUIRE_GPU(gpu);
  // Products near 1e34: fine in f32, but any f16 or overflowing intermediate would show.
  check_matmul(gpu, random_gpu({65, 64}, DType::F32, 500, 1e17f), random_gpu({64, 17}, DType::F32, 501, 1e17f), false);
  check_matmul(gpu, random_gpu({3, 130}, DType::F32, 502, 1e17f), random_gpu({33, 130}, DType::F32, 503, 1e17f), true);
}

TEST(WebGpuMatmul, F16) {
  REQUIRE_GPU(gpu);
  {
    Tensor a = random_gpu({2, 2}, DType::F16, 1), b = random_gpu({2, 2}, DType::F16, 2);
    OpCall probe{OpKind::MatMul, "matmul", {a, b}, {Tensor::empty({2, 2}, DType::F16, Device::webgpu())}, {}, 0.0};
    if (Support s = gpu->supports(probe); !s.ok) GTEST_SKIP() << s.reason;
  }
  uint32_t seed = 600;
  for (int64_t M : {1, 3, 17, 65, 130})
    for (int64_t N : {1, 17, 64, 127})
      for (int64_t K : {1, 3, 64, 130}) {
        Tensor a = random_gpu({M, K}, DType::F16, seed++);
        check_matmul(gpu, a, random_gpu({K, N}, DType::F16, seed++), false);
        check_matmul(gpu, a, random_gpu({N, K}, DType::F16, seed++), true);
        if (HasFatalFailure()) return;
      }
  check_matmul(gpu, random_gpu({2, 33, 40}, DType::F16, seed), random_gpu({40, 9}, DType::F16, seed + 1), false);
  // Partial sums up to ~3e5 (above f16's 65504) that cancel: only an f32 accumulator survives.
  const int64_t K = 64, N = 8;
  std::vector<uint16_t> av(K, f32_to_f16(100.f)), bv(K * N);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) bv[k * N + n] = f32_to_f16((k < K / 2 ? 100.f : -100.f) + (n == k % N ? 0.5f : 0.f));
  for (int64_t rows : {1, 40}) {
    std::vector<uint16_t> arows;
    for (int64_t r = 0; r < rows; ++r) arows.insert(arows.end(), av.begin(), av.end());
    Tensor a = Tensor::from_host(arows.data(), arows.size() * 2, {rows, K}, DType::F16, Device::webgpu());
    Tensor b = Tensor::from_host(bv.data(), bv.size() * 2, {K, N}, DType::F16, Device::webgpu());
    check_matmul(gpu, a, b, false);
  }
}

// Sets the matmul tuning for one scope through the C++ override (webgpu/plans/tuning.hpp),
// restoring the previous one after: how these tests force a kernel shape.
std::optional<webgpu::KernelTuning> g_override;
struct ScopedTuning {
  std::optional<webgpu::KernelTuning> saved;
  template <class F>
  explicit ScopedTuning(F&& change) : saved(g_override) {
    webgpu::KernelTuning t = g_override.value_or(webgpu::KernelTuning{});
    change(t.matmul);
    g_override = t;
    webgpu::set_kernel_tuning_override(g_override);
  }
  ~ScopedTuning() {
    g_override = saved;
    webgpu::set_kernel_tuning_override(g_override);
  }
};
// "AxBxC..." as numbers, for shapes written the way WGT_MATMUL_* takes them.
template <size_t N>
std::array<uint32_t, N> dims(const char* text, uint32_t fill = 1) {
  std::array<uint32_t, N> d;
  d.fill(fill);
  size_t i = 0;
  for (const char* c = text; *c && i < N; ++i) {
    d[i] = static_cast<uint32_t>(std::strtoul(c, const_cast<char**>(&c), 10));
    if (*c == 'x') ++c;
  }
  return d;
}

// Sets an environment variable for one scope (reloaded: the next launch sees it); for the
// tests of the variables' parsing.
TEST(WebGpuMatmul, TileOverridesAgree) {
  REQUIRE_GPU(gpu);
  Tensor a = random_gpu({2, 130, 65}, DType::F32, 700), b = random_gpu({65, 127}, DType::F32, 701);
  Tensor bt = random_gpu({127, 65}, DType::F32, 702);
  for (const char* tile : {"32x32x8x4x4", "64x64x8x4x4", "64x64x16x4x4", "64x32x8x4x4", "32x64x16x4x8", "128x128x8x8x8"}) {
    ScopedTuning st([&](webgpu::MatmulTuning& m) { m.tile = dims<5>(tile); });
    std::string v;
    try {
      v = check_matmul(gpu, a, b, false);
      check_matmul(gpu, a, bt, true);
    } catch (const Error& e) {
      // A tile the device cannot hold (e.g. 256 invocations on a 128-limit adapter) must say so.
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("WGT_MATMUL_TILE"), std::string::npos) << e.what();
      continue;
    }
    const std::string t = tile;  // "BMxBNxBKxTMxTN" is reported as "tiled BMxBNxBK TMxTN ..."
    const size_t third = t.find('x', t.find('x', t.find('x') + 1) + 1);
    EXPECT_EQ(v.rfind("tiled " + t.substr(0, third) + " " + t.substr(third + 1) + " ", 0), 0u) << v;
  }
  {
    ScopedTuning off([](webgpu::MatmulTuning& m) { m.gemv_off = true; });
    EXPECT_EQ(check_matmul(gpu, random_gpu({1, 65}, DType::F32, 703), b, false).rfind("tiled", 0), 0u);
  }
  {
    ScopedTuning g([](webgpu::MatmulTuning& m) { m.gemv = {64, 16}; });
    EXPECT_EQ(check_matmul(gpu, random_gpu({3, 65}, DType::F32, 704), bt, true), "gemv 64x16 kfast");
  }
  ScopedTuning bad([](webgpu::MatmulTuning& m) { m.tile = {64, 64, 8, 3, 4}; });  // TM not a multiple of 4
  OpCall call{OpKind::MatMul, "matmul", {a, b}, {Tensor::empty({2, 130, 127}, DType::F32, Device::webgpu())}, {}, 0.0};
  try {
    gpu->execute(call);
    ADD_FAILURE() << "an invalid WGT_MATMUL_TILE was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
}

bool has(const std::string& v, const char* part) { return v.find(part) != std::string::npos; }

TEST(WebGpuMatmul, Vec4LoadsWhereLayoutAllows) {
  REQUIRE_GPU(gpu);
  // The H200's large-matrix tile (these small shapes would get the 64x64x8 tile, whose 256
  // invocations cannot each take a whole vec4 of a 64x8 chunk, so it loads scalars).
  ScopedTuning big_tile([](webgpu::MatmulTuning& m) { m.tile = {128, 128, 8, 8, 8}; });
  uint32_t seed = 900;
  // K and N multiples of 4, offset 0: both operands vec4, output vec4 (guard 4 keeps it aligned).
  Tensor a = random_gpu({70, 132}, DType::F32, seed++), b = random_gpu({132, 68}, DType::F32, seed++);
  std::string v = check_matmul(gpu, a, b, false, 4);
  EXPECT_TRUE(has(v, "a:v4") && has(v, "b:v4") && has(v, "o:v4")) << v;
  // nt: B K-contiguous, vec4 along K (transposing stores).
  v = check_matmul(gpu, a, random_gpu({68, 132}, DType::F32, seed++), true, 4);
  EXPECT_TRUE(has(v, "b:k") && has(v, "b:v4")) << v;
  // Transposed A ([K, M] storage, M % 4 == 0): vec4 along M.
  v = check_matmul(gpu, random_gpu({132, 68}, DType::F32, seed++).t(), b, false, 4);
  EXPECT_TRUE(has(v, "a:m") && has(v, "a:v4")) << v;
  // Odd guard: the output offset is not 16-byte aligned, so scalar stores.
  v = check_matmul(gpu, a, b, false);
  EXPECT_FALSE(has(v, "o:v4")) << v;
  // K % 4 != 0 or an operand offset not a multiple of 4: scalar loads for that operand.
  v = check_matmul(gpu, random_gpu({70, 131}, DType::F32, seed), random_gpu({131, 68}, DType::F32, seed + 1), false, 4);
  seed += 2;
  EXPECT_FALSE(has(v, "a:v4")) << v;
  EXPECT_TRUE(has(v, "b:v4")) << v;  // N-fast B only needs N and its row stride % 4
  Tensor big = random_gpu({3, 70, 132}, DType::F32, seed++);
  v = check_matmul(gpu, big.select(0, 1).slice(1, 1, 129), random_gpu({128, 64}, DType::F32, seed++), false, 4);
  EXPECT_FALSE(has(v, "a:v4")) << v;
  // Batched with 4-aligned batch strides, and a broadcast b.
  v = check_matmul(gpu, big, random_gpu({132, 12}, DType::F32, seed++).unsqueeze(0).expand({3, 132, 12}), false, 4);
  EXPECT_TRUE(has(v, "a:v4") && has(v, "b:v4")) << v;
  // WGT_MATMUL_VEC=off keeps everything scalar; results agree.
  {
    ScopedTuning off([](webgpu::MatmulTuning& m) { m.vec = false; });
    v = check_matmul(gpu, a, b, false, 4);
    EXPECT_FALSE(has(v, "v4")) << v;
  }
  // Override tiles: vec4 loads where the chunk splits into whole vec4 per invocation
  // (BM*BK/4 and BN*BK/4 multiples of the invocation count), scalar loads where it does not
  // (64x64x8 with 256 invocations has 128 vec4 of A per chunk).
  struct T { const char* tile; bool vec; };
  for (const T& t : {T{"64x64x16x4x4", true}, T{"32x64x16x4x8", true}, T{"128x64x16x8x4", true},
                     T{"64x32x16x4x4", true}, T{"64x64x8x4x4", false}}) {
    ScopedTuning e([&](webgpu::MatmulTuning& m) { m.tile = dims<5>(t.tile); });
    for (bool tb : {false, true}) {
      Tensor bb = tb ? random_gpu({68, 132}, DType::F32, seed++) : b;
      v = check_matmul(gpu, a, bb, tb, 4);
      EXPECT_EQ(has(v, "a:v4") && has(v, "b:v4"), t.vec) << t.tile << ": " << v;
      EXPECT_EQ(has(v, "a:v4") || has(v, "b:v4"), t.vec) << t.tile << ": " << v;
    }
  }
}

// f16 stored as packed u32 (no shader-f16): forced with WGT_MATMUL_F16=packed where the adapter
// has shader-f16, the only f16 path where it does not.
TEST(WebGpuMatmul, F16PackedWithoutShaderF16) {
  REQUIRE_GPU(gpu);
  ScopedTuning packed([](webgpu::MatmulTuning& m) { m.f16 = webgpu::F16Store::Packed; });
  uint32_t seed = 1000;
  {
    Tensor a = random_gpu({2, 2}, DType::F16, 1), b = random_gpu({2, 2}, DType::F16, 2);
    OpCall probe{OpKind::MatMul, "matmul", {a, b}, {Tensor::empty({2, 2}, DType::F16, Device::webgpu())}, {}, 0.0};
    if (Support s = gpu->supports(probe); !s.ok) GTEST_SKIP() << "the backend refuses f16 before the kernel: " << s.reason;
  }
  for (int64_t M : {1, 3, 17, 65})
    for (int64_t N : {1, 17, 64, 127})
      for (int64_t K : {1, 3, 64, 130}) {
        Tensor a = random_gpu({M, K}, DType::F16, seed++);
        std::string v = check_matmul(gpu, a, random_gpu({K, N}, DType::F16, seed++), false);  // odd offset
        EXPECT_TRUE(has(v, "f16p")) << v;
        v = check_matmul(gpu, a, random_gpu({N, K}, DType::F16, seed++), true, 4);  // even offset
        EXPECT_TRUE(has(v, "f16p")) << v;
        if (HasFatalFailure()) return;
      }
  // Output modes of the tiled kernel: whole words (even offset and N), atomics otherwise; vec4
  // loads (four halves as vec2<u32>) with a tile that splits into whole vec4 per invocation.
  ScopedTuning tile([](webgpu::MatmulTuning& m) { m.tile = {64, 64, 16, 4, 4}; });
  Tensor a = random_gpu({40, 128}, DType::F16, seed++), b = random_gpu({128, 36}, DType::F16, seed++);
  std::string v = check_matmul(gpu, a, b, false, 4);
  EXPECT_TRUE(has(v, "o:pair") && has(v, "a:v4") && has(v, "b:v4")) << v;
  v = check_matmul(gpu, a, b, false, 5);
  EXPECT_TRUE(has(v, "o:atomic")) << v;
  v = check_matmul(gpu, a, random_gpu({128, 35}, DType::F16, seed++), false, 4);
  EXPECT_TRUE(has(v, "o:atomic") && !has(v, "b:v4")) << v;
  // Batched, transposed and gemv forms.
  check_matmul(gpu, random_gpu({2, 33, 40}, DType::F16, seed), random_gpu({40, 9}, DType::F16, seed + 1), false);
  check_matmul(gpu, random_gpu({3, 2, 64}, DType::F16, seed + 2), random_gpu({3, 20, 64}, DType::F16, seed + 3), true, 4);
  v = check_matmul(gpu, random_gpu({130, 64}, DType::F16, seed + 4).t(), random_gpu({130, 12}, DType::F16, seed + 5), false, 4);
  EXPECT_TRUE(has(v, "a:m") && has(v, "a:v4")) << v;
  // Sums that exceed f16's range on the way but cancel: the accumulator is f32.
  const int64_t K = 64, N = 8;
  std::vector<uint16_t> av(K, f32_to_f16(100.f)), bv(K * N);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) bv[k * N + n] = f32_to_f16((k < K / 2 ? 100.f : -100.f) + (n == k % N ? 0.5f : 0.f));
  for (int64_t rows : {1, 40}) {
    std::vector<uint16_t> arows;
    for (int64_t r = 0; r < rows; ++r) arows.insert(arows.end(), av.begin(), av.end());
    Tensor ah = Tensor::from_host(arows.data(), arows.size() * 2, {rows, K}, DType::F16, Device::webgpu());
    Tensor bh = Tensor::from_host(bv.data(), bv.size() * 2, {K, N}, DType::F16, Device::webgpu());
    check_matmul(gpu, ah, bh, false);
  }
}

TEST(WebGpuMatmul, SmallMGemvAutoChoice) {
  REQUIRE_GPU(gpu);
  // N-contiguous B (nn) takes the 512x64 kernel where the device allows 512 invocations (lavapipe
  // and the H200 do), else 256x8; K-contiguous B takes 256x64.
  Tensor a = random_gpu({1, 256}, DType::F32, 1100);
  const std::string nn = check_matmul(gpu, a, random_gpu({256, 40}, DType::F32, 1101), false);
  EXPECT_TRUE(nn == "gemv 512x64 nfast" || nn == "gemv 256x8 nfast") << nn;
  // K-contiguous B with 8-aligned rows takes the 8-wide kernel (256x32), else the scalar 256x64.
  const std::string v = check_matmul(gpu, a, random_gpu({40, 256}, DType::F32, 1102), true);
  EXPECT_EQ(v.rfind("gemv_vec 256x32x2 m1 ", 0), 0u) << v;
  EXPECT_EQ(check_matmul(gpu, random_gpu({1, 65}, DType::F32, 1103), random_gpu({40, 65}, DType::F32, 1104), true),
            "gemv 256x64 kfast");
}

bool f16_runs(DeviceBackend* gpu) {
  Tensor a = random_gpu({2, 2}, DType::F16, 1), b = random_gpu({2, 2}, DType::F16, 2);
  OpCall probe{OpKind::MatMul, "matmul", {a, b}, {Tensor::empty({2, 2}, DType::F16, Device::webgpu())}, {}, 0.0};
  return gpu->supports(probe).ok;
}

// The 8-wide small-M kernel (matmul_gemv_vec.wgsl) on x @ W^T: every M of 1..4; K around the
// 8-element groups and the A staging chunk (2048, 1024 or 512 values for M = 1, 2, 3-4); K % 8
// != 0 through a padded row stride (8-wide loads plus a single-element tail); B offsets that
// keep or break the 16-byte alignment (the latter must fall back to the scalar gemv); A at odd
// offsets; batches. `reduce` is " sg" or " tree" when the reduction kind is known.
void gemv_vec_cases(DeviceBackend* gpu, DType dt, uint32_t seed, const char* reduce, const char* config = "256x32x2") {
  auto expect_vec = [&](const std::string& v) {
    EXPECT_EQ(v.rfind(std::string("gemv_vec ") + config + " ", 0), 0u) << v;
    if (reduce) {
      EXPECT_TRUE(has(v, reduce)) << v;
    }
  };
  for (int64_t M : {1, 2, 3, 4})
    for (int64_t N : {1, 9, 130})
      for (int64_t K : {8, 24, 520, 2056}) {
        Tensor a = random_gpu({M, K}, dt, seed++);
        expect_vec(check_matmul(gpu, a, random_gpu({N, K}, dt, seed++), true));
        if (::testing::Test::HasFatalFailure()) return;
      }
  for (int64_t M : {1, 3, 4})
    for (int64_t K : {3, 13, 301, 2049}) {
      const int64_t Kp = (K + 7) / 8 * 8 + 8;  // padded row stride, a multiple of 8
      Tensor a = random_gpu({M, Kp}, dt, seed++).slice(1, 1, 1 + K);  // odd offset, row stride Kp
      Tensor w = random_gpu({21, Kp}, dt, seed++);
      expect_vec(check_matmul(gpu, a, w.slice(1, 0, K), true));
      expect_vec(check_matmul(gpu, a, w.slice(0, 2, 19).slice(1, 0, K), true));  // offset 2*Kp
      // Offset 1 and a contiguous row stride K: not 16-byte aligned, the scalar gemv runs.
      std::string v = check_matmul(gpu, a, w.slice(1, 1, 1 + K), true);
      EXPECT_EQ(v.rfind("gemv 256x64 kfast", 0), 0u) << v;
      v = check_matmul(gpu, a, random_gpu({17, K}, dt, seed++), true);
      EXPECT_EQ(v.rfind("gemv 256x64 kfast", 0), 0u) << v;
      if (::testing::Test::HasFatalFailure()) return;
    }
  // Batches (batch stride 20*64) and a broadcast W (batch stride 0).
  expect_vec(check_matmul(gpu, random_gpu({3, 2, 64}, dt, seed), random_gpu({3, 20, 64}, dt, seed + 1), true));
  expect_vec(check_matmul(gpu, random_gpu({3, 4, 72}, dt, seed + 2), random_gpu({20, 72}, dt, seed + 3), true, 4));
}

TEST(WebGpuMatmul, GemvVecF32) {
  REQUIRE_GPU(gpu);
  gemv_vec_cases(gpu, DType::F32, 1200, nullptr);
  ScopedTuning off([](webgpu::MatmulTuning& m) { m.subgroups = false; });
  gemv_vec_cases(gpu, DType::F32, 1300, " tree");
}

TEST(WebGpuMatmul, GemvVecF16) {
  REQUIRE_GPU(gpu);
  if (!f16_runs(gpu)) GTEST_SKIP() << "the backend refuses f16 before the kernel";
  gemv_vec_cases(gpu, DType::F16, 1400, nullptr);  // native where the adapter has shader-f16
  ScopedTuning packed([](webgpu::MatmulTuning& m) { m.f16 = webgpu::F16Store::Packed; });
  gemv_vec_cases(gpu, DType::F16, 1500, " f16p");
  ScopedTuning off([](webgpu::MatmulTuning& m) { m.subgroups = false; });
  gemv_vec_cases(gpu, DType::F16, 1600, " tree f16p");
}

// Rows per invocation (RB > 1) over the same cases, f32 and packed f16, both reductions.
TEST(WebGpuMatmul, GemvVecRowBlocks) {
  REQUIRE_GPU(gpu);
  {
    ScopedTuning rb([](webgpu::MatmulTuning& m) { m.gemv_vec = {256, 32, 4}; });
    gemv_vec_cases(gpu, DType::F32, 1800, nullptr, "256x32x4");
  }
  if (!f16_runs(gpu)) return;
  ScopedTuning rb3([](webgpu::MatmulTuning& m) { m.gemv_vec = {128, 32, 3}; });
  ScopedTuning packed([](webgpu::MatmulTuning& m) { m.f16 = webgpu::F16Store::Packed; });
  ScopedTuning off([](webgpu::MatmulTuning& m) { m.subgroups = false; });
  gemv_vec_cases(gpu, DType::F16, 2000, " tree f16p", "128x32x3");
}

// Mixed precision (f32 activations x f16 weights -> f32, the weights converted exactly):
// every kernel family (vector gemv, scalar gemv for unaligned rows, tiled for M > 4), both
// layouts, odd sizes, checked at f32 tolerance against the oracle on the exact f16 values.
TEST(WebGpuMatmul, MixedF32TimesF16) {
  REQUIRE_GPU(gpu);
  uint32_t seed = 2100;
  for (const char* f16 : {"auto", "packed"}) {
    ScopedTuning e([&](webgpu::MatmulTuning& m) {
      m.f16 = std::string(f16) == "packed" ? webgpu::F16Store::Packed : webgpu::F16Store::Auto;
    });
    for (int64_t M : {1, 4, 5, 33})
      for (int64_t N : {1, 9, 130})
        for (int64_t K : {8, 13, 520}) {
          Tensor a = random_gpu({M, K}, DType::F32, seed++);
          const std::string v = check_matmul(gpu, a, random_gpu({N, K}, DType::F16, seed++), true);
          EXPECT_TRUE(has(v, " b:f16")) << v;
          if (M <= 4 && K % 8 == 0) {
            EXPECT_EQ(v.rfind("gemv_vec ", 0), 0u) << v;
          }
          check_matmul(gpu, a, random_gpu({K, N}, DType::F16, seed++), false);
          if (HasFatalFailure()) return;
        }
  }
  // f16 x f32 (the other way round) is not a mixed form: refused, cast first.
  OpCall call{OpKind::MatMul, "matmul", {random_gpu({2, 8}, DType::F16, 1), random_gpu({8, 3}, DType::F32, 2)},
              {Tensor::empty({2, 3}, DType::F32, Device::webgpu())}, {}, 0.0};
  EXPECT_FALSE(gpu->supports(call).ok);
}

// addmm_t (c + a @ b^T): fused into the vector gemv's epilogue for f32 outputs (mixed f16
// weights too), an add after the product elsewhere (tiled M > 4, f16 outputs); equal to the
// CPU reference either way.
TEST(WebGpuMatmul, AddmmFusedAndUnfused) {
  REQUIRE_GPU(gpu);
  const Policy saved = Runtime::get().policy();
  for (auto [M, wdt, odt] : {std::tuple{1, DType::F32, DType::F32}, {3, DType::F16, DType::F32},
                             {37, DType::F32, DType::F32}, {2, DType::F16, DType::F16}}) {
    Tensor a = rand_normal({M, 72}, 10 + M, 0.0, 1.0, odt), w = rand_normal({50, 72}, 20 + M, 0.0, 1.0, wdt);
    Tensor c = rand_normal({M, 50}, 30 + M, 0.0, 1.0, odt);
    Policy p = saved;
    p.mode = PolicyMode::CpuOnly;
    p.cpu_mode = CpuMode::Reference;
    Runtime::get().set_policy(p);
    const auto want = cast(addmm_t(c, a, w), DType::F32).to_vector<float>();
    p = saved;
    p.allow_fallback = false;
    Runtime::get().set_policy(p);
    const Device g = Device::webgpu();
    const auto got = cast(addmm_t(c.to(g), a.to(g), w.to(g)).cpu(), DType::F32).to_vector<float>();
    const std::string v = webgpu::matmul_last_variant();
    EXPECT_EQ(has(v, " +c"), M <= 4 && odt == DType::F32) << v;
    ASSERT_EQ(got.size(), want.size());
    const double tol = odt == DType::F16 ? 2e-2 : 1e-4;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << i << " via " << v;
  }
  Runtime::get().set_policy(saved);
  Tensor a = rand_normal({2, 8}, 1), w = rand_normal({3, 8}, 2);
  EXPECT_THROW(addmm_t(rand_normal({2, 4}, 3), a, w), Error);
  EXPECT_THROW(addmm_t(rand_normal({2, 3}, 3, 0.0, 1.0, DType::F16), a, w), Error);
}

// |got - want| <= rel * (1 + max |want|) everywhere, and no NaN.
void expect_near_scaled(const std::vector<float>& got, const std::vector<float>& want, double rel, const std::string& via) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 0;
  for (float f : want) scale = std::max(scale, static_cast<double>(std::fabs(f)));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_FALSE(std::isnan(got[i])) << i << " via " << via;
    EXPECT_NEAR(got[i], want[i], rel * (1 + scale)) << i << " via " << via;
  }
}

// rms_norm_matmul_t against the CPU reference (rms_norm then matmul_t): fused into the vector
// gemv for f32 x with M <= 4 (with and without an f16 weight, K with a tail of the 8-wide
// loads, several staging chunks, rows of B not a multiple of the workgroup's), unfused for
// M > 4, f16 x, and rows of w the vector gemv cannot read (K = 37: not 16-byte aligned); a
// strided norm weight, large and small values.
TEST(WebGpuMatmul, RmsNormMatmulFusedAndUnfused) {
  REQUIRE_GPU(gpu);
  const Policy saved = Runtime::get().policy();
  struct Case {
    int64_t M, N, K;
    DType xdt, wdt;
    double scale;
    bool fused;
  };
  for (const Case& c : {Case{1, 50, 72, DType::F32, DType::F32, 1.0, true}, Case{3, 17, 40, DType::F32, DType::F16, 1.0, true},
                        Case{4, 131, 3000, DType::F32, DType::F16, 1.0, true}, Case{3, 5, 37, DType::F32, DType::F32, 1.0, true},
                        Case{3, 17, 37, DType::F32, DType::F16, 1.0, false}, Case{1, 9, 4096, DType::F32, DType::F32, 3e4, true},
                        Case{6, 33, 40, DType::F32, DType::F32, 1.0, false}, Case{2, 20, 24, DType::F16, DType::F16, 1.0, false},
                        Case{1, 1, 8, DType::F32, DType::F32, 1e-3, true}}) {
    SCOPED_TRACE("M " + std::to_string(c.M) + " N " + std::to_string(c.N) + " K " + std::to_string(c.K) + " x " +
                 dtype_name(c.xdt) + " w " + dtype_name(c.wdt));
    Tensor x = mul(rand_normal({c.M, c.K}, 40 + c.K, 0.0, 1.0), c.scale), w = rand_normal({c.N, c.K}, 41, 0.0, 1.0, c.wdt);
    // f32 K = 37 fused: rows of w padded to 40 (aligned row starts; the K % 8 tail is read singly).
    const bool padded = c.fused && c.K % 8 != 0;
    const Tensor wpad = rand_normal({c.N, 40}, 41, 0.0, 1.0, c.wdt);
    if (padded) w = wpad.slice(1, 0, c.K);
    x = cast(x, c.xdt);
    // A strided view as the norm weight (every other element of a longer vector).
    Tensor g2 = cast(rand_normal({2 * c.K}, 42, 1.0, 0.5), c.xdt), g = g2.slice(0, 0, 2 * c.K, 2);
    Policy p = saved;
    p.mode = PolicyMode::CpuOnly;
    p.cpu_mode = CpuMode::Reference;
    Runtime::get().set_policy(p);
    const auto want = cast(matmul_t(rms_norm(x, g, 1e-5), w), DType::F32).to_vector<float>();
    EXPECT_EQ(cast(rms_norm_matmul_t(x, g, w, 1e-5), DType::F32).to_vector<float>(), want) << "CPU fused == unfused";
    p = saved;
    p.allow_fallback = false;
    Runtime::get().set_policy(p);
    const Device d = Device::webgpu();
    const Tensor wd = padded ? wpad.to(d).slice(1, 0, c.K) : w.to(d);  // the view itself on the device
    const auto got = cast(rms_norm_matmul_t(x.to(d), g.to(d), wd, 1e-5).cpu(), DType::F32).to_vector<float>();
    const std::string v = webgpu::matmul_last_variant();
    EXPECT_EQ(has(v, " +norm"), c.fused) << v;
    expect_near_scaled(got, want, c.xdt == DType::F16 ? 2e-2 : 2e-5, v);
  }
  Runtime::get().set_policy(saved);
  // The rows of x and a non-unit-stride weight g also go through the fused kernel on the device
  // (g compacted), and x may be a row slice of a larger activation.
  Tensor big = rand_normal({3, 64}, 50), w = rand_normal({10, 64}, 51), g = rand_normal({64}, 52, 1.0, 0.1);
  const auto want = matmul_t(rms_norm(big.slice(0, 1, 3), g), w).to_vector<float>();
  const Device d = Device::webgpu();
  const auto got = rms_norm_matmul_t(big.to(d).slice(0, 1, 3), g.to(d), w.to(d)).cpu().to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i])));
  // Typed errors: weight of the wrong length or dtype, x broadcast against a batched w.
  EXPECT_THROW(rms_norm_matmul_t(big, rand_normal({63}, 1), w), Error);
  EXPECT_THROW(rms_norm_matmul_t(big, cast(g, DType::F16), w), Error);
  EXPECT_THROW(rms_norm_matmul_t(big, g, rand_normal({2, 10, 64}, 3)), Error);
}

// silu_mul_matmul_t against the CPU reference (silu_mul then matmul_t, plus the addend):
// fused into the vector gemv where gate and up are slices of one activation with equal
// strides (up after or before gate in the row: a negative element delta), unfused where up
// has other strides, for M > 4 and for f16; large gate values saturate silu without NaN.
TEST(WebGpuMatmul, SiluMulMatmulFusedAndUnfused) {
  REQUIRE_GPU(gpu);
  const Policy saved = Runtime::get().policy();
  const Device d = Device::webgpu();
  struct Case {
    int64_t M, F, N;
    bool up_first, same_strides, addend;
    DType dt;
    double scale;
    bool fused;
  };
  for (const Case& c : {Case{1, 96, 50, false, true, true, DType::F32, 1.0, true},
                        Case{3, 40, 17, true, true, false, DType::F32, 1.0, true},
                        Case{4, 200, 33, false, true, true, DType::F32, 40.0, true},
                        Case{2, 48, 9, false, false, true, DType::F32, 1.0, false},
                        Case{6, 40, 20, false, true, true, DType::F32, 1.0, false},
                        Case{2, 48, 20, false, true, false, DType::F16, 1.0, false}}) {
    SCOPED_TRACE("M " + std::to_string(c.M) + " F " + std::to_string(c.F) + " N " + std::to_string(c.N));
    const Tensor gu = cast(mul(rand_normal({c.M, 2 * c.F}, 60 + c.F, 0.0, 1.0), c.scale), c.dt);
    const Tensor w = rand_normal({c.N, c.F}, 61, 0.0, 1.0, c.dt == DType::F32 ? DType::F16 : c.dt);
    const Tensor add = cast(rand_normal({c.M, c.N}, 62), c.dt);
    const Tensor other = cast(rand_normal({c.F, c.M}, 63), c.dt);  // up with other strides: a transposed view
    auto parts = [&](const Tensor& t, const Tensor& o) {
      Tensor lo = t.slice(1, 0, c.F), hi = t.slice(1, c.F, 2 * c.F);
      Tensor gate = c.up_first ? hi : lo, up = c.up_first ? lo : hi;
      if (!c.same_strides) up = o.transpose(0, 1);
      return std::pair{gate, up};
    };
    Policy p = saved;
    p.mode = PolicyMode::CpuOnly;
    p.cpu_mode = CpuMode::Reference;
    Runtime::get().set_policy(p);
    auto [gate, up] = parts(gu, other);
    const Tensor want_t = c.addend ? addmm_t(add, silu_mul(gate, up), w) : matmul_t(silu_mul(gate, up), w);
    const auto want = cast(want_t, DType::F32).to_vector<float>();
    p = saved;
    p.allow_fallback = false;
    Runtime::get().set_policy(p);
    auto [gg, ug] = parts(gu.to(d), other.to(d));
    const Tensor y = c.addend ? silu_mul_matmul_t(gg, ug, w.to(d), add.to(d)) : silu_mul_matmul_t(gg, ug, w.to(d));
    const auto got = cast(y.cpu(), DType::F32).to_vector<float>();
    const std::string v = webgpu::matmul_last_variant();
    EXPECT_EQ(has(v, " +silu_mul"), c.fused) << v;
    expect_near_scaled(got, want, c.dt == DType::F16 ? 2e-2 : 2e-5, v);
  }
  Runtime::get().set_policy(saved);
}

TEST(WebGpuMatmul, GemvVecOverrides) {
  REQUIRE_GPU(gpu);
  Tensor a = random_gpu({2, 200}, DType::F32, 1700), w = random_gpu({50, 200}, DType::F32, 1701);
  {
    ScopedTuning e([](webgpu::MatmulTuning& m) { m.gemv_vec = {64, 16, 1}; });
    EXPECT_EQ(check_matmul(gpu, a, w, true).rfind("gemv_vec 64x16 m2 ", 0), 0u);
  }
  // Several rows per invocation (RB): N = 50 is not a multiple of the rows per workgroup.
  for (const char* rb : {"128x32x2", "64x16x3"}) {
    ScopedTuning e([&](webgpu::MatmulTuning& m) { m.gemv_vec = dims<3>(rb); });
    for (int64_t M : {1, 4}) {
      const std::string v = check_matmul(gpu, random_gpu({M, 200}, DType::F32, 1703), w, true);
      EXPECT_EQ(v.rfind(std::string("gemv_vec ") + rb + " m" + std::to_string(M), 0), 0u) << v;
    }
  }
  {
    ScopedTuning e([](webgpu::MatmulTuning& m) { m.gemv_vec = {128, 128, 1}; });  // one row per workgroup
    EXPECT_EQ(check_matmul(gpu, a, w, true).rfind("gemv_vec 128x128 m2 ", 0), 0u);
  }
  // Fewer invocations per row than a subgroup holds (lavapipe's are 4-16 wide, NVIDIA's 32):
  // subgroups span several rows and must fall back to storing their own partial sums.
  for (const char* narrow : {"64x2", "64x4", "128x8"}) {
    ScopedTuning e([&](webgpu::MatmulTuning& m) { m.gemv_vec = dims<3>(narrow); });
    for (int64_t M : {1, 4}) {
      const std::string v = check_matmul(gpu, random_gpu({M, 200}, DType::F32, 1702), w, true);
      EXPECT_EQ(v.rfind(std::string("gemv_vec ") + narrow, 0), 0u) << v;
    }
  }
  {
    ScopedTuning e([](webgpu::MatmulTuning& m) { m.gemv_vec_off = true; });
    EXPECT_EQ(check_matmul(gpu, a, w, true), "gemv 256x64 kfast");
  }
  {
    ScopedTuning e([](webgpu::MatmulTuning& m) { m.vec = false; });
    EXPECT_EQ(check_matmul(gpu, a, w, true), "gemv 256x64 kfast");
  }
  for (const char* bad : {"64x3", "48x32", "x", "128x32x9", "128x32x0", "128x32x2x2"}) {
    EnvGuard e("WGT_MATMUL_GEMV_VEC", bad);
    OpCall call{OpKind::MatMul, "matmul_t", {a, w}, {Tensor::empty({2, 50}, DType::F32, Device::webgpu())}, {}, 0.0};
    call.attrs.transpose_b = true;
    try {
      gpu->execute(call);
      ADD_FAILURE() << "WGT_MATMUL_GEMV_VEC='" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    }
  }
  EnvGuard e("WGT_MATMUL_SUBGROUPS", "maybe");
  OpCall call{OpKind::MatMul, "matmul_t", {a, w}, {Tensor::empty({2, 50}, DType::F32, Device::webgpu())}, {}, 0.0};
  call.attrs.transpose_b = true;
  EXPECT_THROW(gpu->execute(call), Error);
}

TEST(WebGpuMatmul, RejectsWhatItCannotRun) {
  REQUIRE_GPU(gpu);
  Tensor ai = Tensor::from_vector(std::vector<int32_t>(6, 1), {2, 3}, Device::webgpu());
  Tensor bi = Tensor::from_vector(std::vector<int32_t>(6, 1), {3, 2}, Device::webgpu());
  OpCall call{OpKind::MatMul, "matmul", {ai, bi}, {Tensor::empty({2, 2}, DType::I32, Device::webgpu())}, {}, 0.0};
  Support s = gpu->supports(call);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("cast"), std::string::npos) << s.reason;
  Tensor a = random_gpu({2, 3}, DType::F32, 800), b = random_gpu({4, 2}, DType::F32, 801);
  OpCall bad{OpKind::MatMul, "matmul", {a, b}, {Tensor::empty({2, 2}, DType::F32, Device::webgpu())}, {}, 0.0};
  EXPECT_FALSE(gpu->supports(bad).ok);  // K mismatch (3 vs 4)
}

}  // namespace
}  // namespace wgt
