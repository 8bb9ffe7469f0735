// Tests of the vec4 Copy fast path (kernels/copy_fast.cpp): contiguous -> contiguous copies at
// 16-byte aligned offsets go through copy_vec4.wgsl; the bytes around the output must survive,
// and ranges that do not qualify must still be copied exactly by the general kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu/kernels/copy_fast.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

std::vector<uint8_t> download(const Tensor& whole) {
  std::vector<uint8_t> host(static_cast<size_t>(whole.storage()->nbytes()));
  Runtime::get().read_bytes(*whole.storage(), 0, host.data(), host.size());
  return host;
}

// Copies `n` elements of dtype `dt` from element offset `in_off` of a patterned buffer into
// element offset `out_off` of a 0xAB-filled buffer, through the backend's Copy kernel, and checks
// every byte of the destination buffer.
void check_copy(DeviceBackend* gpu, DType dt, int64_t n, int64_t in_off, int64_t out_off) {
  const size_t es = dtype_size(dt);
  const int64_t in_total = in_off + n + 5, out_total = out_off + n + 9;
  std::vector<uint8_t> src(static_cast<size_t>(in_total) * es), dst(static_cast<size_t>(out_total) * es, 0xAB);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  Tensor sw = Tensor::from_host(src.data(), src.size(), {in_total}, dt, Device::webgpu());
  Tensor dw = Tensor::from_host(dst.data(), dst.size(), {out_total}, dt, Device::webgpu());
  Tensor x(sw.storage(), {n}, {1}, in_off, dt), y(dw.storage(), {n}, {1}, out_off, dt);
  OpCall call{OpKind::Copy, "contiguous", {x}, {y}, {}};
  ASSERT_TRUE(gpu->supports(call).ok);
  gpu->execute(call);
  std::vector<uint8_t> got = download(dw);
  std::vector<uint8_t> want = dst;
  std::memcpy(&want[static_cast<size_t>(out_off) * es], &src[static_cast<size_t>(in_off) * es], static_cast<size_t>(n) * es);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "byte " << i << " of the destination; " << dtype_name(dt) << " n=" << n
                               << " in_off=" << in_off << " out_off=" << out_off;
}

TEST(WebGpuCopyFast, AlignedRangesAndFallbacks) {
  std::string why;
  DeviceBackend* gpu = Runtime::get().webgpu_backend(0, &why);
  if (!gpu) GTEST_SKIP() << "no WebGPU adapter: " << why;
  // Qualifying: 16-byte aligned offsets and a multiple of 16 bytes (f32, f16, u8, i64).
  check_copy(gpu, DType::F32, 4096 * 3, 0, 0);
  check_copy(gpu, DType::F32, 1000, 4, 8);
  check_copy(gpu, DType::F16, 1032, 8, 24);
  check_copy(gpu, DType::U8, 4096 + 16, 16, 32);
  check_copy(gpu, DType::I64, 66, 2, 4);
  // Not qualifying (unaligned offsets or length): the general kernel, same bytes.
  check_copy(gpu, DType::F32, 1000, 1, 8);
  check_copy(gpu, DType::F32, 1001, 0, 0);
  check_copy(gpu, DType::F16, 1032, 8, 23);
  check_copy(gpu, DType::U8, 37, 0, 16);
}

TEST(WebGpuCopyFast, DeclinesWhatItCannotCopy) {
  std::string why;
  DeviceBackend* gpu = Runtime::get().webgpu_backend(0, &why);
  if (!gpu) GTEST_SKIP() << "no WebGPU adapter: " << why;
  auto* ctx = dynamic_cast<webgpu::Context*>(gpu);
  ASSERT_NE(ctx, nullptr) << "the WebGPU backend is expected to implement webgpu::Context";
  Tensor a = Tensor::from_vector(std::vector<float>(64, 1.f), {8, 8}, Device::webgpu());
  Tensor out = Tensor::empty({8, 8}, DType::F32, Device::webgpu());
  EXPECT_FALSE(webgpu::copy_contiguous_vec4(*ctx, a.t(), out));                         // strided input
  EXPECT_FALSE(webgpu::copy_contiguous_vec4(*ctx, a.slice(1, 0, 7), out.slice(1, 0, 7)));  // not contiguous
  EXPECT_FALSE(webgpu::copy_contiguous_vec4(*ctx, a.reshape({64}).slice(0, 1, 61), out.reshape({64}).slice(0, 0, 60)));
  EXPECT_TRUE(webgpu::copy_contiguous_vec4(*ctx, a, out));
  EXPECT_EQ(out.cpu().to_vector<float>(), std::vector<float>(64, 1.f));
}

}  // namespace
}  // namespace wgt
