// The power-of-two FFT plans (plans/fft_plan.cpp: the register Stockham kernel,
// shaders/fft_stockham.wgsl, and the local kernel it replaces, still selectable through the
// tuning) against the CPU reference: every length 2 .. 4096 (each radix combination 16^a x
// {1, 2, 4, 8}), four-step lengths 2^13 .. 2^16 with several row lengths, odd batches,
// non-last axes and strided views, real transforms, the norm modes, Bluestein on the
// Stockham kernel, and NaN / inf staying in their line.
#include <optional>

#include "fft_test_support.hpp"
#include "webgpu/kernels/fft.hpp"
#include "webgpu/plans/tuning.hpp"

namespace wgt {
namespace {

using namespace fft_test;

// The FFT tuning in force for one scope.
struct FftTuningScope {
  FftTuningScope(webgpu::FftKernel k, std::optional<uint32_t> row = std::nullopt,
                 std::optional<uint32_t> radix = std::nullopt, bool split = false) {
    webgpu::KernelTuning t = webgpu::kernel_tuning_from_settings();
    t.fft.kernel = k;
    t.fft.row = row;
    t.fft.radix = radix;
    t.fft.split_exchange = split;
    webgpu::set_kernel_tuning_override(t);
  }
  ~FftTuningScope() { webgpu::set_kernel_tuning_override(std::nullopt); }
};

constexpr webgpu::FftKernel kKernels[] = {webgpu::FftKernel::Stockham, webgpu::FftKernel::Local};
std::string kname(webgpu::FftKernel k) { return k == webgpu::FftKernel::Local ? "local" : "stockham"; }

TEST_F(WebGpuFft, PowerOfTwoLengthsOnBothKernels) {
  for (webgpu::FftKernel k : kKernels) {
    FftTuningScope scope(k);
    for (int64_t n = 2; n <= 4096; n *= 2) {
      // Odd batches: the last workgroup of lines is partly past the batch.
      const int64_t batch = n >= 1024 ? 3 : 5;
      Tensor x = randc({batch, n}, static_cast<uint32_t>(n + 3));
      const std::string tag = kname(k) + " " + std::to_string(n);
      compare(x, [](const Tensor& t) { return fft(t); }, n, "fft " + tag);
      compare(x, [](const Tensor& t) { return ifft(t); }, n, "ifft " + tag);
    }
  }
}

// The largest radix 8 and 4 (WGT_FFT_RADIX): more invocations per line and more exchange
// passes, on the lengths each radix combination covers, a four-step length and an inverse.
TEST_F(WebGpuFft, StockhamSmallerRadices) {
  for (uint32_t radix : {8u, 4u})
    for (int64_t n : {2, 4, 8, 32, 128, 512, 4096, 16384}) {
      FftTuningScope scope(webgpu::FftKernel::Stockham, std::nullopt, radix);
      Tensor x = randc({n >= 4096 ? 2 : 5, n}, static_cast<uint32_t>(n + radix));
      const std::string tag = "radix " + std::to_string(radix) + " n " + std::to_string(n);
      compare(x, [](const Tensor& t) { return fft(t); }, n, "fft " + tag);
      // The plan ran the smaller radix (a line of one pass has P = n points per invocation).
      const std::string want = n == 4096 ? (radix == 8 ? " s8.8.8.8 " : " s4.4.4.4.4.4 ") : " s";
      EXPECT_NE(webgpu::fft_last_plan().find(want), std::string::npos) << tag << ": " << webgpu::fft_last_plan();
      if (n == 4096) compare(x, [](const Tensor& t) { return ifft(t); }, n, "ifft " + tag);
    }
}

// The split exchange (WGT_FFT_EXCHANGE=split: real, then imaginary parts through f32
// workgroup memory) on lengths of two and three passes, with radix 8, a four-step length, an
// inverse and a Bluestein length (two transforms in one kernel, the exchanges back to back).
TEST_F(WebGpuFft, StockhamSplitExchange) {
  for (uint32_t radix : {16u, 8u})
    for (int64_t n : {64, 512, 4096, 16384}) {
      FftTuningScope scope(webgpu::FftKernel::Stockham, std::nullopt, radix, true);
      Tensor x = randc({n >= 4096 ? 2 : 5, n}, static_cast<uint32_t>(n + 3 * radix));
      const std::string tag = "split radix " + std::to_string(radix) + " n " + std::to_string(n);
      compare(x, [](const Tensor& t) { return fft(t); }, n, "fft " + tag);
      EXPECT_NE(webgpu::fft_last_plan().find(" split"), std::string::npos) << tag << ": " << webgpu::fft_last_plan();
      if (n == 4096) compare(x, [](const Tensor& t) { return ifft(t); }, n, "ifft " + tag);
    }
  FftTuningScope scope(webgpu::FftKernel::Stockham, std::nullopt, std::nullopt, true);
  Tensor x = randc({3, 1009}, 77);
  compare(x, [](const Tensor& t) { return fft(t); }, 1009, "fft split bluestein 1009");
  EXPECT_NE(webgpu::fft_last_plan().find("bluestein"), std::string::npos) << webgpu::fft_last_plan();
  EXPECT_NE(webgpu::fft_last_plan().find(" split"), std::string::npos) << webgpu::fft_last_plan();
}

TEST_F(WebGpuFft, FourStepPowersOfTwoWithEachRowLength) {
  // Rows of the largest one-workgroup length (columns of 2 .. 16), and shorter rows that make
  // the strided column stage longer (n1 up to 256, several radix passes).
  for (std::optional<uint32_t> row : {std::optional<uint32_t>{}, std::optional<uint32_t>{256}, std::optional<uint32_t>{64}})
    for (int64_t n : {8192, 16384, 32768, 65536}) {
      FftTuningScope scope(webgpu::FftKernel::Stockham, row);
      const int64_t batch = n <= 16384 ? 3 : 1;
      Tensor x = randc({batch, n}, static_cast<uint32_t>(n + 7));
      const std::string tag = std::to_string(n) + " row " + (row ? std::to_string(*row) : std::string("auto"));
      compare(x, [](const Tensor& t) { return fft(t); }, n, "fft " + tag);
      compare(x, [](const Tensor& t) { return ifft(t, -1, -1, FftNorm::Ortho); }, n, "ifft ortho " + tag);
    }
  // The local kernel's square split of the same lengths.
  FftTuningScope scope(webgpu::FftKernel::Local);
  for (int64_t n : {8192, 65536}) compare(randc({1, n}, 3), [](const Tensor& t) { return fft(t); }, n, "local four-step");
}

TEST_F(WebGpuFft, StockhamAxesAndStridedViews) {
  FftTuningScope scope(webgpu::FftKernel::Stockham);
  // Lines adjacent in memory (a non-last axis): the lines-fastest layout, 16 lines a workgroup.
  for (int64_t n : {8, 64, 4096}) {
    Tensor x = randc({n, 5}, static_cast<uint32_t>(n));
    compare(x, [](const Tensor& t) { return fft(t, -1, 0); }, n, "axis 0 " + std::to_string(n));
  }
  Tensor y = randc({3, 256, 7}, 5);
  compare(y, [](const Tensor& t) { return ifft(t, -1, 1); }, 256, "middle axis");
  // A transposed view (axis stride != 1) and a stepped one (line stride 2n).
  compare(randc({32, 9}, 6), [](const Tensor& t) { return fft(t.t()); }, 32, "transposed");
  compare(randc({6, 256}, 7), [](const Tensor& t) { return fft(t.slice(0, 0, 6, 2)); }, 256, "stepped rows");
  compare(randc({3, 1024}, 8), [](const Tensor& t) { return fft(t.slice(1, 0, 1024, 2)); }, 512, "stepped elements");
  // Batch dims that do not fold: compacted first; four-step along a non-last axis.
  compare(randc({4, 6, 16}, 9), [](const Tensor& t) { return fft(t.slice(0, 0, 4, 2).slice(1, 0, 5), -1, 2); }, 16,
          "compacted");
  compare(randc({8192, 3}, 10), [](const Tensor& t) { return fft(t, -1, 0); }, 8192, "four-step axis 0");
  // Zero padding and truncation of the input (n != the axis length).
  compare(randc({3, 100}, 11), [](const Tensor& t) { return fft(t, 128); }, 128, "padded");
  compare(randc({3, 300}, 12), [](const Tensor& t) { return fft(t, 256); }, 256, "truncated");
}

TEST_F(WebGpuFft, StockhamRealTransformsNormsAndBluestein) {
  FftTuningScope scope(webgpu::FftKernel::Stockham);
  for (int64_t n : {2, 64, 4096, 16384}) {
    const std::string tag = std::to_string(n);
    compare(randr({3, n}, static_cast<uint32_t>(n)), [](const Tensor& t) { return rfft(t); }, n, "rfft " + tag);
    compare(randc({3, n / 2 + 1}, static_cast<uint32_t>(n + 1)), [n](const Tensor& t) { return irfft(t, n); }, n,
            "irfft " + tag);
  }
  for (int64_t n : {16, 2048, 8192})
    for (FftNorm m : {FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward}) {
      const std::string tag = std::to_string(n) + " norm " + std::to_string(static_cast<int>(m));
      Tensor x = randc({3, n}, static_cast<uint32_t>(n + 5));
      compare(x, [m](const Tensor& t) { return fft(t, -1, -1, m); }, n, "fft " + tag);
      compare(x, [m](const Tensor& t) { return ifft(t, -1, -1, m); }, n, "ifft " + tag);
    }
  // Bluestein: convolutions of 32 (two passes), 2048 and 4096 points on the Stockham kernel.
  for (int64_t n : {11, 1009, 2047}) {
    Tensor x = randc({3, n}, static_cast<uint32_t>(n));
    compare(x, [](const Tensor& t) { return fft(t); }, n, "bluestein fft " + std::to_string(n));
    compare(x, [](const Tensor& t) { return ifft(t, -1, -1, FftNorm::Forward); }, n, "bluestein ifft " + std::to_string(n));
  }
}

TEST_F(WebGpuFft, StockhamNanAndInfStayInTheirLine) {
  for (webgpu::FftKernel k : kKernels) {
    FftTuningScope scope(k);
    for (int64_t n : {8, 16, 4096, 8192, 1009}) expect_nonfinite_like_cpu(n, kname(k) + " " + std::to_string(n));
  }
}

}  // namespace
}  // namespace wgt
