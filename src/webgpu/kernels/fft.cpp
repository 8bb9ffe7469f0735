// WebGPU launcher for OpKind::Fft (contract in src/fft/fft_ops.cpp): encodes the plan of
// src/webgpu/plans/fft_plan.cpp into dispatches of shaders/fft_stockham.wgsl / fft_local.wgsl. The plan's constant
// table (twiddles, four-step twiddles, Bluestein chirp and chirp spectrum) is computed here on
// the host in double precision, uploaded once per device and plan, and kept for later calls.
#include <cmath>
#include <complex>
#include <map>
#include <numbers>

#include "webgpu/kernels/fft.hpp"

#include "fft/radix2.hpp"
#include "webgpu/context.hpp"
#include "webgpu/plans/fft_plan.hpp"

namespace wgt::webgpu {
namespace {

using cd = std::complex<double>;

// This thread's latest plan, for fft_last_plan() (its name is built only when asked).
thread_local FftPlan g_last_fft;

// Mirrors `struct Params` of fft_local.wgsl.
struct FftParams {
  uint32_t lines, cols, bin, in_len;
  uint32_t out_len, n_total, in_off, ibh;
  uint32_t ibl, ic, ie, es;
  uint32_t out_off, obh, obl, oc;
  uint32_t oe, tw_off, lo_off, hi_off;
  uint32_t lo_bits, chirp_off, spec_off;
  float scale;
  float conj_in, conj_out;  // -1: conjugate (inverse transforms), else 1
  uint32_t pad0, pad1;
};
static_assert(sizeof(FftParams) == 112, "must match the WGSL Params struct");

// exp(-2 pi i num / den), the argument reduced exactly (num mod den) before the division.
cd root(uint64_t num, uint64_t den) {
  const double a = -2.0 * std::numbers::pi * static_cast<double>(num % den) / static_cast<double>(den);
  return {std::cos(a), std::sin(a)};
}

// Offsets (in complex entries) of the table's parts, shared by every stage of a plan.
struct TableLayout {
  uint32_t tw[2] = {0, 0};
  uint32_t lo = 0, hi = 0, lo_bits = 0, chirp = 0, spec = 0;
};

std::vector<cd> build_table(const FftPlan& plan, TableLayout& t) {
  std::vector<cd> v;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const uint32_t L = plan.stages[s].shader.len;
    t.tw[s] = static_cast<uint32_t>(v.size());
    for (uint32_t k = 0; k < L; ++k) v.push_back(root(k, L));
  }
  if (plan.algo == FftAlgo::FourStep) {
    // w_n^p = w_n^(p mod 2^b) * w_n^((p >> b) 2^b): two short tables instead of one of n entries.
    while ((uint64_t{1} << (2 * t.lo_bits)) < plan.n) ++t.lo_bits;
    const uint64_t T = uint64_t{1} << t.lo_bits;
    t.lo = static_cast<uint32_t>(v.size());
    for (uint64_t k = 0; k < T; ++k) v.push_back(root(k, plan.n));
    t.hi = static_cast<uint32_t>(v.size());
    for (uint64_t k = 0; k * T < plan.n; ++k) v.push_back(root(k * T, plan.n));
  }
  if (plan.algo == FftAlgo::Bluestein) {
    // Chirp c_j = exp(-i pi j^2 / n) (j^2 reduced mod 2n); spectrum of conj(c) wrapped to m
    // points, scaled by 1/m, stored where the forward passes leave each frequency: natural
    // order after Stockham passes, digit-reversed after the local kernel's.
    const uint64_t n = plan.n, m = plan.m;
    t.chirp = static_cast<uint32_t>(v.size());
    std::vector<cd> b(m);
    for (uint64_t j = 0; j < n; ++j) {
      const cd c = root((j * j) % (2 * n), 2 * n);
      v.push_back(c);
      b[j] = std::conj(c);
      if (j) b[m - j] = std::conj(c);
    }
    fft_detail::fft_pow2(b, -1);  // the chirp's spectrum, unnormalized forward
    t.spec = static_cast<uint32_t>(v.size());
    v.resize(v.size() + m);
    const std::vector<uint32_t> rad = fft_radices(m);
    const bool natural = plan.stages[0].shader.kernel == static_cast<uint8_t>(FftKernelKind::Stockham);
    for (uint64_t k = 0; k < m; ++k) {
      const uint32_t at = natural ? static_cast<uint32_t>(k) : fft_digit_reverse(static_cast<uint32_t>(k), rad, static_cast<uint32_t>(m));
      v[t.spec + at] = b[k] / static_cast<double>(m);
    }
  }
  return v;
}

// The plan's table on this device, uploaded on first use. Kernels run under the runtime
// lock, so the cache needs no lock of its own; it is bounded (tables are a few KiB each).
struct CachedTable {
  Tensor tensor;
  TableLayout layout;
};
const CachedTable& plan_table(Context& ctx, const FftPlan& plan) {
  static std::map<std::pair<uint64_t, std::string>, CachedTable> cache;
  std::string key = std::to_string(static_cast<int>(plan.algo)) + ":" + std::to_string(plan.n) + ":" +
                    std::to_string(plan.n1) + ":" + std::to_string(plan.m);
  for (const FftStage& s : plan.stages) key += ":" + std::to_string(s.shader.len) + "k" + std::to_string(s.shader.kernel);
  const auto id = std::make_pair(ctx.buffer_domain(), key);
  if (auto it = cache.find(id); it != cache.end()) return it->second;
  if (cache.size() >= 64) cache.clear();
  CachedTable t;
  const std::vector<cd> v = build_table(plan, t.layout);
  std::vector<float> f(2 * v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    f[2 * i] = static_cast<float>(v[i].real());
    f[2 * i + 1] = static_cast<float>(v[i].imag());
  }
  t.tensor = ctx.scratch({static_cast<int64_t>(v.size())}, DType::C64);
  ctx.write(*t.tensor.storage()->buffer(), 0, f.data(), f.size() * sizeof(float));
  return cache.emplace(id, std::move(t)).first->second;
}

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

Planned<FftPlan> plan_for(const Context& ctx, const OpCall& call) { return plan_fft(Caps::of(ctx), fft_tuning(), call); }

void encode_fft(Context& ctx, OpCall& call, const FftPlan& plan) {
  g_last_fft = plan;
  Tensor& out = call.outputs[0];
  if (out.numel() == 0) return;
  const Tensor x = plan.compact_in ? ctx.compact(call.inputs[0]) : call.inputs[0];
  const CachedTable& table = plan_table(ctx, plan);
  Tensor scratch;
  if (plan.algo == FftAlgo::FourStep) {
    int64_t lines = 1;
    for (int d = 0; d < x.dim(); ++d)
      if (d != call.attrs.axis) lines *= x.shape()[d];
    scratch = ctx.scratch({lines * static_cast<int64_t>(plan.n)}, DType::C64);
  }
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const FftStage& s = plan.stages[i];
    FftParams p{};
    p.lines = u32(static_cast<int64_t>(s.lines_total));
    p.cols = u32(static_cast<int64_t>(s.cols));
    p.bin = u32(static_cast<int64_t>(s.bin));
    p.in_len = u32(static_cast<int64_t>(s.in_len));
    p.out_len = u32(static_cast<int64_t>(s.out_len));
    p.n_total = u32(static_cast<int64_t>(plan.n));
    p.in_off = u32(s.in_off), p.ibh = u32(s.ibh), p.ibl = u32(s.ibl), p.ic = u32(s.ic), p.ie = u32(s.ie), p.es = u32(s.es);
    p.out_off = u32(s.out_off + (s.out_scratch ? 0 : out.offset()));
    p.obh = u32(s.obh), p.obl = u32(s.obl), p.oc = u32(s.oc), p.oe = u32(s.oe);
    p.tw_off = table.layout.tw[i];
    p.lo_off = table.layout.lo, p.hi_off = table.layout.hi, p.lo_bits = table.layout.lo_bits;
    p.chirp_off = table.layout.chirp, p.spec_off = table.layout.spec;
    p.scale = s.scale;
    p.conj_in = s.conj_in ? -1.0f : 1.0f;
    p.conj_out = s.conj_out ? -1.0f : 1.0f;
    const Tensor& in = s.in_scratch ? scratch : x;
    const Tensor& dst = s.out_scratch ? scratch : out;
    const uint64_t groups = s.groups();
    auto [gx, gy] = ctx.grid(groups);
    Dispatch d;
    d.pipeline = ctx.pipeline(s.key(), [&] { return s.variant(); });
    d.args = {ctx.arg(in), ctx.arg(table.tensor), ctx.arg(dst, false)};
    d.params = &p;
    d.params_size = sizeof p;
    d.groups_x = gx;
    d.groups_y = gy;
    ctx.dispatch(d);
  }
}

}  // namespace

std::string fft_last_plan() { return g_last_fft.stages.empty() ? std::string() : g_last_fft.name(); }

void register_fft_kernels(KernelRegistry& r) { r.add_planned<FftPlan, plan_for, encode_fft>(OpKind::Fft); }

}  // namespace wgt::webgpu
