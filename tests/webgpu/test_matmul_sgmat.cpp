// The f16 matmul on subgroup matrices (shaders/matmul_sgmat.wgsl) against the CPU reference:
// partial tiles, K chunks that end mid-chunk, several raster groups of tile rows, both B layouts, vec4 and scalar stores, batches,
// the default tiles and a forced 128x128 one, and cancelling partial sums that need the f32
// accumulator. On an adapter with f16 subgroup matrices (Debian's Dawn on NVIDIA, or on sid's
// lavapipe: scripts/test_sgmat_cpu.sh) every case must run on them; elsewhere (Debian 12's
// lavapipe, the npm engine) the same cases check that the plan falls back to the other kernels
// and still agrees.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>

#include "matmul_check.hpp"
#include "webgpu/plans/tuning.hpp"
#include "webgpu_test.hpp"
#include "wgt/webgpu_info.hpp"

namespace wgt {
namespace {

// Only 8x8x8 fragments (lavapipe): the forced 128x128 tile then needs 4x4 fragments per
// subgroup and BK 16 to fit in 32 KiB of workgroup memory.
bool adapter_has_only_small_matrices() {
  std::string why;
  for (const WebGPUInfo& i : webgpu_adapters(&why))
    if (i.index == 0)
      for (const std::string& c : i.subgroup_matrix_configs)
        if (c == "f16->f32 16x16x16" || c == "f16->f32 16x8x16") return false;
  return true;
}

struct ScopedSgmatTile {
  explicit ScopedSgmatTile(std::array<uint32_t, 5> t, webgpu::SgVariant v = webgpu::SgVariant::Auto) {
    webgpu::KernelTuning k;
    k.matmul.sgmat = t;
    k.matmul.sgmat_variant = v;
    webgpu::set_kernel_tuning_override(k);
  }
  ~ScopedSgmatTile() { webgpu::set_kernel_tuning_override(std::nullopt); }
};

TEST(WebGpuMatmulSgMat, AlignedF16AgreesWithReference) {
  REQUIRE_GPU(gpu);
  {
    Tensor a = random_gpu({2, 4}, DType::F16, 1), b = random_gpu({4, 4}, DType::F16, 2);
    OpCall probe{OpKind::MatMul, "matmul", {a, b}, {Tensor::empty({2, 4}, DType::F16, Device::webgpu())}, {}, 0.0};
    if (Support s = gpu->supports(probe); !s.ok) GTEST_SKIP() << s.reason;
  }
  const bool tc = wgt::testing::adapter_has_f16_matrices();
  auto expect_kernel = [&](const std::string& variant) {
    EXPECT_EQ(variant.rfind("sgmat ", 0) == 0, tc) << variant << (tc ? " (the adapter has f16 subgroup matrices)" : "");
  };
  uint32_t seed = 9000;
  auto next = [&] { return seed++; };  // a call: no unsequenced increments within one expression
  // M, N, K: partial M and N tiles, K of one partial chunk, of whole chunks, and ending mid-chunk.
  const int64_t shapes[][3] = {{5, 4, 4}, {17, 36, 32}, {65, 68, 96}, {130, 132, 36}, {64, 64, 64}, {33, 200, 260}, {581, 68, 32}};  // the last: more tile rows than one raster group (8)
  for (const auto& s : shapes) {
    const int64_t M = s[0], N = s[1], K = s[2];
    Tensor a = random_gpu({M, K}, DType::F16, next());
    expect_kernel(check_matmul(gpu, a, random_gpu({K, N}, DType::F16, next()), false, 4));   // o:v4
    expect_kernel(check_matmul(gpu, a, random_gpu({N, K}, DType::F16, next()), true, 4));    // B K-contiguous
    expect_kernel(check_matmul(gpu, a, random_gpu({N + 1, K}, DType::F16, next()), true));   // odd N: scalar stores
    if (HasFatalFailure()) return;
  }
  // Batches (folded and broadcast) and a row-strided view of A whose stride stays aligned.
  expect_kernel(check_matmul(gpu, random_gpu({3, 40, 64}, DType::F16, next()), random_gpu({64, 36}, DType::F16, next()),
                             false, 4));
  expect_kernel(check_matmul(gpu, random_gpu({2, 1, 24, 32}, DType::F16, next()),
                             random_gpu({3, 20, 32}, DType::F16, next()), true, 8));
  Tensor wide = random_gpu({48, 72}, DType::F16, next());
  expect_kernel(check_matmul(gpu, wide.slice(1, 4, 68), random_gpu({64, 28}, DType::F16, next()), false, 4));
  // The 128x128 tile (8 subgroups) on shapes with partial tiles both ways.
  {
    const bool small = tc && adapter_has_only_small_matrices();
    const std::array<uint32_t, 5> tile = small ? std::array<uint32_t, 5>{128, 128, 16, 4, 4}
                                               : std::array<uint32_t, 5>{128, 128, 32, 4, 2};
    ScopedSgmatTile big(tile);
    std::string v = check_matmul(gpu, random_gpu({130, 96}, DType::F16, next()), random_gpu({96, 260}, DType::F16, next()),
                                 false, 4);
    expect_kernel(v);
    if (tc) {
      EXPECT_NE(v.find(small ? "128x128x16 4x4" : "128x128x32 4x2"), std::string::npos) << v;
    }
    expect_kernel(check_matmul(gpu, random_gpu({257, 64}, DType::F16, next()), random_gpu({132, 64}, DType::F16, next()),
                               true, 4));
  }
  // Partial sums up to ~3e5 (above f16's 65504) that cancel: only an f32 accumulator survives.
  const int64_t K = 64, N = 8;
  std::vector<uint16_t> av(K, f32_to_f16(100.f)), bv(K * N);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) bv[k * N + n] = f32_to_f16((k < K / 2 ? 100.f : -100.f) + (n == k % N ? 0.5f : 0.f));
  std::vector<uint16_t> arows;
  for (int64_t r = 0; r < 40; ++r) arows.insert(arows.end(), av.begin(), av.end());
  Tensor a = Tensor::from_host(arows.data(), arows.size() * 2, {40, K}, DType::F16, Device::webgpu());
  Tensor b = Tensor::from_host(bv.data(), bv.size() * 2, {K, N}, DType::F16, Device::webgpu());
  expect_kernel(check_matmul(gpu, a, b, false, 4));
}

// Every data path of the K chunks (MatmulTuning::sgmat_variant: staged, wide, and auto, which
// must pick wide here) against the reference on two tiles each: whole tiles, partial tiles both
// ways and a K that ends mid-chunk (zero-filled in registers), both B layouts, a batch; and a K
// that is not a multiple of 8, where the plan keeps the staged path.
TEST(WebGpuMatmulSgMat, EveryDataPathAgreesWithReference) {
  REQUIRE_GPU(gpu);
  {
    Tensor a = random_gpu({2, 4}, DType::F16, 1), b = random_gpu({4, 4}, DType::F16, 2);
    OpCall probe{OpKind::MatMul, "matmul", {a, b}, {Tensor::empty({2, 4}, DType::F16, Device::webgpu())}, {}, 0.0};
    if (Support s = gpu->supports(probe); !s.ok) GTEST_SKIP() << s.reason;
  }
  const bool tc = wgt::testing::adapter_has_f16_matrices();
  const bool small = tc && adapter_has_only_small_matrices();
  // 8x8x8 fragments: 16 subgroups and BK 16, 8 subgroups and BK 32; 16x16x16: 4 subgroups of
  // 2x2 fragments and BK 32, 8 subgroups of 4x4 and BK 16. K 64 and 72 take several chunks.
  const std::array<uint32_t, 5> tiles[2] = {
      small ? std::array<uint32_t, 5>{64, 64, 16, 2, 2} : std::array<uint32_t, 5>{64, 64, 32, 2, 2},
      small ? std::array<uint32_t, 5>{32, 64, 32, 2, 2} : std::array<uint32_t, 5>{128, 256, 16, 4, 4}};
  struct Path {
    webgpu::SgVariant v;
    const char* tag;
  };
  const Path paths[] = {{webgpu::SgVariant::Staged, " v:staged"},
                        {webgpu::SgVariant::Wide, " v:wide"},
                        {webgpu::SgVariant::Auto, " v:wide"}};
  uint32_t seed = 9500;
  auto next = [&] { return seed++; };
  for (const Path& path : paths)
    for (const auto& tile : tiles) {
      ScopedSgmatTile forced(tile, path.v);
      auto expect_path = [&](const std::string& variant, bool aligned) {
        EXPECT_EQ(variant.rfind("sgmat ", 0) == 0, tc) << variant;
        const std::string want = aligned ? path.tag : " v:staged";
        if (tc) {
          EXPECT_NE(variant.find(want), std::string::npos) << want << ": " << variant;
        }
      };
      // M, N, K: whole tiles; partial tiles both ways and a K ending mid-chunk.
      const int64_t shapes[][3] = {{128, 256, 64}, {136, 264, 72}};
      for (const auto& sh : shapes) {
        const int64_t M = sh[0], N = sh[1], K = sh[2];
        Tensor a = random_gpu({M, K}, DType::F16, next());
        expect_path(check_matmul(gpu, a, random_gpu({K, N}, DType::F16, next()), false, 4), true);
        expect_path(check_matmul(gpu, a, random_gpu({N, K}, DType::F16, next()), true, 4), true);
        if (HasFatalFailure()) return;
      }
      // A batch over B's broadcast (N-contiguous B), and B K-contiguous with an odd N.
      expect_path(check_matmul(gpu, random_gpu({2, 64, 128}, DType::F16, next()), random_gpu({128, 64}, DType::F16, next()),
                               false, 4),
                  true);
      expect_path(check_matmul(gpu, random_gpu({64, 64}, DType::F16, next()), random_gpu({67, 64}, DType::F16, next()), true),
                  true);
      // K % 8 != 0: 8-element accesses would straddle rows, so the staged path runs.
      expect_path(check_matmul(gpu, random_gpu({64, 68}, DType::F16, next()), random_gpu({68, 64}, DType::F16, next()), false, 4),
                  false);
      if (HasFatalFailure()) return;
    }
}

}  // namespace
}  // namespace wgt
