// The FFT family's plan (OpKind::Fft, contract in src/fft/fft_ops.cpp): how a transform length
// is computed on WebGPU and how the call's lines are laid out. plan_fft is pure (no Dawn
// call); kernels/fft.cpp encodes the plan into dispatches of shaders/fft_stockham.wgsl
// (power-of-two lines: register-resident radix-16 Stockham passes) or shaders/fft_local.wgsl
// (any smooth line, in workgroup memory; also power-of-two lines under WGT_FFT_KERNEL=local).
//   Direct:    a smooth length (2^a 3^b 5^c 7^d) that fits one workgroup's memory: one
//              dispatch, the whole line in workgroup memory, mixed-radix (8/4/2/3/5/7) passes.
//   FourStep:  a smooth length n = n1 * n2 beyond that: a dispatch of n1-point column FFTs
//              times the twiddles w_n^(c k1) into a scratch tensor, then a dispatch of n2-point
//              row FFTs storing X[k1 + n1 k2]. Powers of two: n2 = the largest one-workgroup
//              length (2^20 = 256 x 4096), so the strided column stage reads runs of 16 adjacent
//              columns and the rows run the fastest kernel (WGT_FFT_ROW overrides n2); other
//              lengths: n1 ~ n2 ~ sqrt(n).
//   Bluestein: any other length n (primes included) whose chirp-z convolution of power-of-two
//              length m >= 2n - 1 fits one workgroup: one dispatch (chirp, forward FFT,
//              product with the chirp's precomputed spectrum, inverse FFT, chirp).
// The twiddles, chirps and chirp spectra are computed on the host in double precision and
// read from a table (GPUs' sin / cos are coarse).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "webgpu/plans/plan.hpp"
#include "webgpu/plans/tuning.hpp"

namespace wgt::webgpu {

enum class FftAlgo : uint8_t { Direct, FourStep, Bluestein };
// How the stage reads its input (the values are fft_local.wgsl's IN_MODE).
enum class FftIn : uint8_t { Complex = 0, Real = 1, Hermitian = 2 };
// Which shader runs a stage.
enum class FftKernelKind : uint8_t { Local = 0, Stockham = 1 };

constexpr int kFftMaxPasses = 12;
// The Stockham kernel's default points per invocation, with the split exchange the default
// (FftTuning): on NVIDIA Hopper, 8 points on 512 invocations and half the workgroup memory
// ran 4096- and 2^20-point transforms about twice as fast as 16 points exchanging complex
// values (BENCHMARKS.md, the FFT rows and their reading).
constexpr uint32_t kFftDefaultRadix = 8;  // radix passes of one in-workgroup FFT (4096 = 3^7 needs 7)

// The fields that select one dispatch's shader: the pipeline key is their bytes (no padding).
struct FftShader {
  uint16_t len = 1;      // L: points of the FFT in workgroup memory
  uint16_t lines = 1;    // C: lines per workgroup
  uint16_t wg = 64;      // invocations per workgroup
  uint16_t cols = 1;     // columns per batch (FftStage::cols), a constant of the shader
  uint8_t in_mode = 0;   // FftIn
  uint8_t out_real = 0;  // store the real part (irfft) as f32
  uint8_t twiddle = 0;   // four-step column stage: times w_n^(col * k) on store
  uint8_t blue = 0;      // Bluestein: chirp, FFT, spectrum product, inverse FFT, chirp
  uint8_t load_lf = 0;   // loads walk lines fastest (the lines are adjacent in memory)
  uint8_t store_lf = 0;  // stores walk lines fastest (Stockham: both or neither)
  uint8_t np = 0;        // radix passes
  uint8_t kernel = 0;    // FftKernelKind
  uint8_t bin1 = 0;      // one inner batch group (FftStage::bin == 1): no division in the addresses
  uint8_t swizzle = 0;   // Stockham: XOR-swizzled workgroup-memory indices (bank conflicts)
  uint8_t split = 0;     // Stockham: exchanges through f32 workgroup memory, real then imaginary parts
  uint8_t reserved = 0;  // keeps the struct free of padding (make_key compares bytes)
  std::array<uint8_t, kFftMaxPasses> radix{};  // first pass (on the whole line) first; Stockham: radix[0] = points per invocation
};

// One dispatch: the shader and the geometry of its lines. Line g (0..lines_total-1) is column
// c = g % cols of batch b = g / cols = bh * bin + bl; its element i is read at
// in_off + bh*ibh + bl*ibl + c*ic + i*ie and is the full transform's element n = c + i*cols;
// output element k goes to out_off + bh*obh + bl*obl + c*oc + k*oe when c + k*cols < out_len.
struct FftStage {
  FftShader shader;
  uint64_t lines_total = 0, cols = 1, bin = 1;
  int64_t in_off = 0, ibh = 0, ibl = 0, ic = 0, ie = 0, es = 0;  // es: the axis stride (Hermitian mirror)
  int64_t out_off = 0, obh = 0, obl = 0, oc = 0, oe = 0;
  uint64_t in_len = 0, out_len = 0;
  bool in_scratch = false, out_scratch = false;  // reads / writes the four-step scratch tensor
  float scale = 1.0f;
  bool conj_in = false, conj_out = false;  // inverse transforms: conj(F(conj(x))) (a parameter, not a variant)
  uint64_t groups() const { return (lines_total + shader.lines - 1) / shader.lines; }
  PipelineKey key() const;
  ShaderVariant variant() const;
};

struct FftPlan {
  FftAlgo algo = FftAlgo::Direct;
  uint64_t n = 0;             // transform length
  uint64_t n1 = 0, n2 = 0;    // FourStep: column and row lengths (n = n1 * n2)
  uint64_t m = 0;             // Bluestein: convolution length
  bool compact_in = false;    // the input's batch dims do not fold into two strides: compacted first
  std::vector<FftStage> stages;  // one or two dispatches
  std::string name() const;   // e.g. "direct 4096 s16.16.16 x1" (s: Stockham, r: local), "four-step 256x4096 ...", "bluestein 1009 m2048 ..."
};

// The plan of `call`, or why WebGPU's FFT cannot run it.
Planned<FftPlan> plan_fft(const Caps& caps, const FftTuning& tuning, const OpCall& call);

// The largest power of two the in-workgroup FFT handles on this device (<= 4096).
uint32_t fft_max_local(const Limits& l);
// The radices of an in-workgroup FFT of length L (8, 4, 2, then 3, 5, 7), empty when L has
// another prime factor.
std::vector<uint32_t> fft_radices(uint64_t L);
// Where the in-place decimation-in-frequency passes leave frequency k (mixed-radix digit
// reversal over `radices`, first pass first); the shader computes the same.
uint32_t fft_digit_reverse(uint32_t k, const std::vector<uint32_t>& radices, uint32_t L);

}  // namespace wgt::webgpu
