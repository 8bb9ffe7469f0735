// plan_fft: the choice of algorithm per transform length and the line geometry of each
// dispatch (see fft_plan.hpp). Pure: reads the call's shapes, strides, offsets and dtypes and
// the adapter's limits.
#include "webgpu/plans/fft_plan.hpp"

#include <algorithm>
#include <cmath>

#include "webgpu/plans/fft_stockham_gen.hpp"
#include "wgt/error.hpp"

namespace wgt::webgpu {
namespace {

using Kind = OpAttrs::FftKind;

// Element indices travel as u32; keep every index a kernel computes below 2^31.
constexpr uint64_t kIndexLimit = uint64_t{1} << 31;

uint64_t pow2_floor(uint64_t v) {
  uint64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}
uint64_t pow2_ceil(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// Dims [lo, hi) of t merged into one (size, stride), or false when they do not merge.
bool fold(const Tensor& t, int lo, int hi, int64_t* size, int64_t* stride) {
  *size = 1, *stride = 0;
  for (int d = hi - 1; d >= lo; --d) {
    const int64_t s = t.shape()[d];
    if (s == 1) continue;
    if (*size == 1) {
      *size = s, *stride = t.strides()[d];
    } else if (t.strides()[d] == *stride * *size) {
      *size *= s;
    } else {
      return false;
    }
  }
  return true;
}

uint64_t max_index(const Tensor& t) {
  uint64_t m = static_cast<uint64_t>(t.offset());
  for (int d = 0; d < t.dim(); ++d)
    if (t.shape()[d] > 0) m += static_cast<uint64_t>(t.shape()[d] - 1) * static_cast<uint64_t>(t.strides()[d]);
  return m;
}

// Lines per workgroup and invocations for an in-workgroup FFT of length L. Lines side by side
// in memory are grouped (`adjacent`) so each load or store of a workgroup covers whole 32-byte
// sectors; short lines are grouped so a workgroup holds about 1024 points. Independent of the
// batch size, so calls of one length share their pipeline.
void shape_stage(const Limits& l, FftShader& s, bool adjacent) {
  const uint64_t L = s.len;
  const uint64_t max_c = std::max<uint64_t>(1, l.max_compute_workgroup_storage_size / (L * 8));
  uint64_t c = adjacent ? 8 : std::max<uint64_t>(1, 1024 / L);
  c = std::min(c, pow2_floor(max_c));
  s.lines = static_cast<uint16_t>(std::max<uint64_t>(c, 1));
  const uint64_t max_wg = std::min<uint64_t>({256, l.max_compute_invocations_per_workgroup, l.max_compute_workgroup_size_x});
  s.wg = static_cast<uint16_t>(std::min<uint64_t>(max_wg, std::max<uint64_t>(32, pow2_ceil(s.lines * L) / 4)));
}

void set_radices(FftShader& s, const std::vector<uint32_t>& r) {
  s.np = static_cast<uint8_t>(r.size());
  for (size_t i = 0; i < r.size(); ++i) s.radix[i] = static_cast<uint8_t>(r[i]);
}

// At most 4096 points per workgroup: 256 invocations of 16 points, 512 of 8 (the default) or
// 1024 of 4 (max_radix as plan_fft normalizes WGT_FFT_RADIX).
uint64_t max_invocations(const Limits& l, uint32_t max_radix) {
  const uint64_t cap = 256 * 16 / max_radix;
  return std::min<uint64_t>({cap, l.max_compute_invocations_per_workgroup, l.max_compute_workgroup_size_x});
}

// A Stockham stage of power-of-two length s.len, or false when the device cannot hold one
// line's invocations. Lines per workgroup: 16 when they are adjacent in memory (each global
// access of a subgroup then covers 128-byte runs), and enough for 64 invocations; at most
// what workgroup memory and the invocation limit allow. `split`: exchanges through f32
// workgroup memory, one part at a time (FftTuning::split_exchange), half the bytes.
bool shape_stockham(const Limits& l, FftShader& s, bool adjacent, uint32_t max_radix, bool split) {
  const std::vector<uint32_t> r = fft_stockham_radices(s.len, max_radix);
  if (r.empty()) return false;
  const uint64_t L = s.len, T = L / r[0], wg_max = max_invocations(l, max_radix);
  const uint64_t storage = l.max_compute_workgroup_storage_size;
  const bool exchanges = r.size() > 1;
  auto bytes = [&](uint64_t c) { return exchanges ? c * L * (split ? 4 : 8) : 0; };
  if (T > wg_max || bytes(1) > storage) return false;
  uint64_t c = std::max<uint64_t>(adjacent ? 16 : 1, 64 / T);
  c = std::min(c, pow2_floor(wg_max / T));
  while (c > 1 && bytes(c) > storage) c /= 2;
  set_radices(s, r);
  s.kernel = static_cast<uint8_t>(FftKernelKind::Stockham);
  s.lines = static_cast<uint16_t>(c);
  s.wg = static_cast<uint16_t>(c * T);
  s.load_lf = s.store_lf = adjacent && c > 1;
  s.swizzle = exchanges;
  s.split = exchanges && split;
  return true;
}

bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

}  // namespace

uint32_t fft_max_local(const Limits& l) {
  return static_cast<uint32_t>(std::min<uint64_t>(4096, pow2_floor(l.max_compute_workgroup_storage_size / 8)));
}

std::vector<uint32_t> fft_radices(uint64_t L) {
  std::vector<uint32_t> r;
  int a = 0;
  while (L % 2 == 0) L /= 2, ++a;
  for (; a >= 3; a -= 3) r.push_back(8);
  if (a == 2) r.push_back(4);
  if (a == 1) r.push_back(2);
  for (uint32_t p : {3u, 5u, 7u})
    while (L % p == 0) L /= p, r.push_back(p);
  if (L != 1) return {};
  return r;
}

uint32_t fft_digit_reverse(uint32_t k, const std::vector<uint32_t>& radices, uint32_t L) {
  uint32_t p = 0, span = L;
  for (uint32_t r : radices) {
    span /= r;
    p += (k % r) * span;
    k /= r;
  }
  return p;
}

PipelineKey FftStage::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant FftStage::variant() const {
  const FftShader& s = shader;
  const std::string cols = std::to_string(s.cols) + "u";
  if (s.kernel == static_cast<uint8_t>(FftKernelKind::Stockham)) {
    ShaderVariant v{"fft_stockham",
                    {{"L", std::to_string(s.len)}, {"C", std::to_string(s.lines)}, {"WG", std::to_string(s.wg)},
                     {"T", std::to_string(s.len / s.radix[0])}, {"NP", std::to_string(s.np)},
                     {"IN_MODE", std::to_string(s.in_mode)}, {"OUT_REAL", std::to_string(s.out_real)},
                     {"TWIDDLE", std::to_string(s.twiddle)}, {"BLUE", std::to_string(s.blue)},
                     {"LF", std::to_string(s.load_lf)}, {"SWIZZLE", std::to_string(s.swizzle)}, {"SPLIT", std::to_string(s.split)}, {"COLS", cols},
                     {"BIN1", std::to_string(s.bin1)}}};
    for (auto& d : fft_stockham_code(s)) v.defines.push_back(std::move(d));
    return v;
  }
  ShaderVariant v{"fft_local",
                  {{"L", std::to_string(s.len)}, {"C", std::to_string(s.lines)}, {"WG", std::to_string(s.wg)},
                   {"IN_MODE", std::to_string(s.in_mode)}, {"OUT_REAL", std::to_string(s.out_real)},
                   {"TWIDDLE", std::to_string(s.twiddle)}, {"BLUE", std::to_string(s.blue)},
                   {"LOAD_LF", std::to_string(s.load_lf)}, {"STORE_LF", std::to_string(s.store_lf)},
                   {"NP", std::to_string(s.np)}, {"COLS", cols}, {"BIN1", std::to_string(s.bin1)}}};
  // Pass i: radix R, on sub-blocks of M points, butterfly legs `span` = M / R apart, twiddle
  // index stride L / M (the shader unrolls the passes through these constants).
  uint32_t m = s.len;
  for (int i = 0; i < kFftMaxPasses; ++i) {
    const uint32_t r = i < s.np ? s.radix[i] : 1;
    const std::string k = std::to_string(i);
    v.defines.push_back({"R" + k, std::to_string(r)});
    v.defines.push_back({"M" + k, std::to_string(m)});
    v.defines.push_back({"S" + k, std::to_string(m / r)});
    v.defines.push_back({"T" + k, std::to_string(s.len / m)});
    m /= r;
  }
  return v;
}

std::string FftPlan::name() const {
  auto rad = [](const FftShader& s) {
    std::string t = s.kernel == static_cast<uint8_t>(FftKernelKind::Stockham) ? "s" : "r";
    for (int i = 0; i < s.np; ++i) t += (i ? "." : "") + std::to_string(s.radix[i]);
    return t + " x" + std::to_string(s.lines) + (s.split ? " split" : "");
  };
  switch (algo) {
    case FftAlgo::Direct: return "direct " + std::to_string(n) + " " + rad(stages[0].shader);
    case FftAlgo::FourStep:
      return "four-step " + std::to_string(n1) + "x" + std::to_string(n2) + " " + rad(stages[0].shader) + " / " +
             rad(stages[1].shader);
    case FftAlgo::Bluestein: return "bluestein " + std::to_string(n) + " m" + std::to_string(m) + " " + rad(stages[0].shader);
  }
  return "fft";
}

Planned<FftPlan> plan_fft(const Caps& caps, const FftTuning& tuning, const OpCall& call) {
  using P = Planned<FftPlan>;
  if (call.inputs.size() != 1) return P::no("fft expects one input");
  const Tensor& x = call.inputs[0];
  const Kind kind = call.attrs.fft_kind;
  const DType want_in = kind == Kind::RealForward ? DType::F32 : DType::C64;
  if (x.dtype() != want_in) return P::no(std::string("fft input dtype ") + dtype_name(x.dtype()) + ", expected " + dtype_name(want_in));
  const Shape* out_shape = nullptr;
  if (!call.outputs.empty()) out_shape = &call.outputs[0].shape();
  else if (!call.out_specs.empty()) out_shape = &call.out_specs[0].first;
  if (!out_shape) return P::no("fft expects one output");
  if (!call.outputs.empty() && !call.outputs[0].is_contiguous()) return P::no("fft needs a contiguous output");
  const int axis = static_cast<int>(call.attrs.axis);
  if (axis < 0 || axis >= x.dim() || static_cast<int>(out_shape->size()) != x.dim()) return P::no("fft axis out of range");
  for (int64_t s : x.strides())
    if (s < 0) return P::no("negative strides");
  const uint64_t n = static_cast<uint64_t>(call.attrs.fft_n);
  const uint64_t in_len = static_cast<uint64_t>(x.shape()[axis]), out_len = static_cast<uint64_t>((*out_shape)[axis]);
  if (n < 1 || in_len > n || out_len > n) return P::no("fft length inconsistent with the shapes");

  FftPlan plan;
  plan.n = n;
  const Limits& lim = caps.limits;
  const uint64_t lmax = fft_max_local(lim);
  uint64_t B = 1, Bi = 1;
  for (int d = 0; d < x.dim(); ++d)
    if (d != axis) B *= static_cast<uint64_t>(x.shape()[d]);
  for (int d = axis + 1; d < x.dim(); ++d) Bi *= static_cast<uint64_t>(x.shape()[d]);

  // The input's batch dims as (outer, inner) strides; a view whose dims do not fold is compacted.
  int64_t so = 1, sol = 0, si = 1, sil = 0;
  if (!fold(x, 0, axis, &so, &sol) || !fold(x, axis + 1, x.dim(), &si, &sil)) plan.compact_in = true;
  if (max_index(x) >= kIndexLimit) plan.compact_in = true;
  int64_t es = x.strides()[axis], ibh = sol, ibl = sil, in_off = x.offset();
  if (plan.compact_in) {
    es = static_cast<int64_t>(Bi);
    ibh = static_cast<int64_t>(in_len * Bi);
    ibl = 1;
    in_off = 0;
  } else {
    // A folded group of one dim keeps its own stride; a missing group's stride is unused.
    if (so == 1) ibh = 0;
    if (si == 1) ibl = 0;
  }
  const uint64_t out_numel = B * out_len;
  if (out_numel >= kIndexLimit || B * n >= kIndexLimit || (plan.compact_in && B * in_len >= kIndexLimit))
    return P::no("fft of 2^31 or more elements");
  const int64_t os = static_cast<int64_t>(Bi), obh = static_cast<int64_t>(out_len * Bi), obl = 1;

  FftShader base;
  base.in_mode = static_cast<uint8_t>(kind == Kind::RealForward ? FftIn::Real
                                      : kind == Kind::RealInverse ? FftIn::Hermitian
                                                                  : FftIn::Complex);
  const bool inverse = kind == Kind::Inverse || kind == Kind::RealInverse;
  auto first_stage = [&](FftStage& s) {  // reads the call's input
    s.shader.in_mode = base.in_mode;
    s.conj_in = inverse;
    s.in_off = in_off, s.ibh = ibh, s.ibl = ibl, s.es = es;
    s.in_len = in_len;
    s.bin = Bi;
  };
  auto last_stage = [&](FftStage& s) {  // writes the call's output
    s.shader.out_real = kind == Kind::RealInverse;
    s.conj_out = inverse;
    s.out_off = 0, s.obh = obh, s.obl = obl;
    s.out_len = out_len;
    s.scale = static_cast<float>(call.attrs.scalar0);
    s.bin = Bi;
  };
  const bool lines_adjacent_in = Bi > 1 && ibl == 1 && es != 1;
  const bool lines_adjacent_out = Bi > 1;  // the output is contiguous: axis stride Bi, lines 1 apart

  const std::vector<uint32_t> radices = fft_radices(n);
  const bool stockham = tuning.kernel != FftKernel::Local;
  const uint32_t max_radix = tuning.radix == 16u || tuning.radix == 4u ? *tuning.radix : kFftDefaultRadix;
  const bool split = tuning.split_exchange;
  // A one-dispatch stage of length L over the call's lines: Stockham for powers of two
  // (unless tuned off or the device cannot hold a line's invocations), else the local kernel.
  auto whole_line_stage = [&](uint64_t L, bool blue) {
    FftStage s;
    s.shader.len = static_cast<uint16_t>(L);
    s.shader.blue = blue;
    first_stage(s);
    last_stage(s);
    s.lines_total = B, s.cols = 1;
    s.ic = es, s.ie = es, s.oc = os, s.oe = os;
    const bool adjacent = lines_adjacent_in || lines_adjacent_out;
    if (!(stockham && shape_stockham(lim, s.shader, adjacent, max_radix, split))) {
      set_radices(s.shader, fft_radices(L));
      s.shader.load_lf = lines_adjacent_in;
      s.shader.store_lf = lines_adjacent_out;
      shape_stage(lim, s.shader, adjacent);
    }
    s.shader.bin1 = s.bin == 1;
    return s;
  };
  if (!radices.empty() && n <= lmax) {
    plan.algo = FftAlgo::Direct;
    plan.stages.push_back(whole_line_stage(n, false));
    return {plan, {}};
  }
  if (!radices.empty() && n <= lmax * lmax) {
    uint64_t n1 = 0;
    if (stockham && is_pow2(n)) {
      // Rows of 1024 where n allows (on the H200 the 1024 x 1024 split of 2^20 beat 256
      // columns of 4096-long rows: BENCHMARKS.md, run 17). Rows run the fast kernel, read
      // contiguously; columns are read 16 adjacent at a time. WGT_FFT_ROW within what n and
      // the device allow.
      const uint64_t row = tuning.row.value_or(std::min<uint64_t>(lmax, 1024));
      uint64_t n2 = std::clamp<uint64_t>(row, n / lmax, lmax);
      n1 = n / n2;
    } else {
      for (uint64_t d = static_cast<uint64_t>(std::sqrt(static_cast<double>(n))); d >= 1; --d)
        if (n % d == 0) {
          if (d <= lmax && n / d <= lmax) n1 = d;
          break;
        }
    }
    if (n1) {
      const uint64_t n2 = n / n1;
      plan.algo = FftAlgo::FourStep;
      plan.n1 = n1, plan.n2 = n2;
      // Columns: element i of column c is x[c + i*n2]; the results times w_n^(c k1) go to
      // scratch[b][k1][c].
      FftStage a;
      a.shader.len = static_cast<uint16_t>(n1);
      first_stage(a);
      a.shader.twiddle = 1;
      a.lines_total = B * n2, a.cols = n2;
      a.ic = es, a.ie = static_cast<int64_t>(n2) * es;
      a.out_scratch = true, a.out_off = 0, a.obh = static_cast<int64_t>(Bi * n), a.obl = static_cast<int64_t>(n);
      a.oc = 1, a.oe = static_cast<int64_t>(n2), a.out_len = n;
      // Rows: row k1 of the scratch, its frequency k2 is X[k1 + k2*n1].
      FftStage b;
      b.shader.len = static_cast<uint16_t>(n2);
      last_stage(b);
      b.lines_total = B * n1, b.cols = n1;
      b.in_scratch = true, b.in_off = 0, b.ibh = static_cast<int64_t>(Bi * n), b.ibl = static_cast<int64_t>(n);
      b.ic = static_cast<int64_t>(n2), b.ie = 1, b.in_len = n, b.es = 0;
      b.oc = os, b.oe = static_cast<int64_t>(n1) * os;
      if (!(stockham && is_pow2(n) && shape_stockham(lim, a.shader, true, max_radix, split) &&
            shape_stockham(lim, b.shader, true, max_radix, split))) {
        a.shader = b.shader = FftShader{};
        a.shader.len = static_cast<uint16_t>(n1), a.shader.twiddle = 1, a.shader.in_mode = base.in_mode;
        set_radices(a.shader, fft_radices(n1));
        a.shader.load_lf = 1, a.shader.store_lf = 1;
        shape_stage(lim, a.shader, true);
        b.shader.len = static_cast<uint16_t>(n2), b.shader.out_real = kind == Kind::RealInverse;
        set_radices(b.shader, fft_radices(n2));
        b.shader.load_lf = 0, b.shader.store_lf = 1;
        shape_stage(lim, b.shader, true);
      }
      for (FftStage* s : {&a, &b}) {
        s->shader.cols = static_cast<uint16_t>(s->cols);
        s->shader.bin1 = s->bin == 1;
      }
      plan.stages = {a, b};
      return {plan, {}};
    }
  }
  const uint64_t m = pow2_ceil(2 * n - 1);
  if (m <= lmax) {
    plan.algo = FftAlgo::Bluestein;
    plan.m = m;
    plan.stages.push_back(whole_line_stage(m, true));
    return {plan, {}};
  }
  return P::no("fft length " + std::to_string(n) + ": WebGPU runs lengths 2^a 3^b 5^c 7^d up to " +
               std::to_string(lmax * lmax) + " and other lengths up to " + std::to_string(lmax / 2) +
               " (Bluestein in one workgroup)");
}

}  // namespace wgt::webgpu
