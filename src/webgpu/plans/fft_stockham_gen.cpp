// Generator of fft_stockham.wgsl's per-variant code (see fft_stockham_gen.hpp). Invocation t
// of a line holds points t + T*m in register v{m}. A pass of radix R with Ns = product of the
// earlier radices runs butterflies j = t + s*T (s < P / R) on registers v{s + r*P/R}: their
// inputs are points j + r*L/R = t + T*(s + r*P/R); twiddle w_{Ns R}^(r (j mod Ns)); DFT_R;
// outputs go to (j / Ns) * Ns R + (j mod Ns) + r Ns (Stockham's autosort order), which the
// next pass reads back as t + T*m. In the last pass Ns R = L, so the outputs are already
// points t + T*m of the transform: no exchange before the store.
#include "webgpu/plans/fft_stockham_gen.hpp"

#include "webgpu/plans/fft_plan.hpp"

namespace wgt::webgpu {
namespace {

std::string u(uint64_t v) { return std::to_string(v) + "u"; }
std::string reg(uint32_t m) { return "v" + std::to_string(m); }
uint32_t log2u(uint64_t v) {
  uint32_t k = 0;
  while ((uint64_t{1} << k) < v) ++k;
  return k;
}

// Lines declaring w{2} .. w{n-1} from w1 (and w0 unused): products of depth <= 4, so the
// rounding error stays a few ulp.
std::string powers(const std::string& w, uint32_t n) {
  std::string o;
  auto pw = [&](uint32_t k) { return w + std::to_string(k); };
  for (uint32_t k = 2; k < n; ++k) {
    const uint32_t hi = k >= 8 ? 8 : k >= 4 ? 4 : k >= 2 ? 2 : 1;  // largest power of two <= k
    const uint32_t lo = k == hi ? hi / 2 : k - hi;
    const uint32_t a = k == hi ? hi / 2 : hi;
    o += "    let " + pw(k) + " = cmul(" + pw(a) + ", " + pw(lo) + ");\n";
  }
  return o;
}

std::string passes(const FftShader& s) {
  const uint32_t L = s.len, P = s.radix[0], T = L / P;
  std::string o;
  uint32_t ns = 1;
  for (int k = 0; k < s.np; ++k) {
    const uint32_t R = s.radix[k], Q = P / R;
    if (k > 0 && !s.split) {  // read this pass's inputs back (split: read at the exchange)
      o += "  workgroupBarrier();\n";
      for (uint32_t m = 0; m < P; ++m) o += "  " + reg(m) + " = sm[sidx(line, t + " + u(T * m) + ")];\n";
    }
    for (uint32_t q = 0; q < Q; ++q) {
      o += "  {\n";
      if (ns > 1) {
        o += "    let j = t + " + u(q * T) + ";\n";
        o += "    let w1 = tab[p.tw_off + (j & " + u(ns - 1) + ") * " + u(L / (ns * R)) + "];\n";
        o += powers("w", R);
        for (uint32_t r = 1; r < R; ++r)
          o += "    " + reg(q + r * Q) + " = cmul(" + reg(q + r * Q) + ", w" + std::to_string(r) + ");\n";
      }
      const std::string ty = "array<vec2<f32>, " + std::to_string(R) + ">";
      o += "    let y = dft" + std::to_string(R) + "(" + ty + "(";
      for (uint32_t r = 0; r < R; ++r) o += (r ? ", " : "") + reg(q + r * Q);
      o += "));\n";
      for (uint32_t r = 0; r < R; ++r) o += "    " + reg(q + r * Q) + " = y[" + std::to_string(r) + "];\n";
      o += "  }\n";
    }
    if (k + 1 < s.np) {  // write the outputs to their autosort places
      if (k > 0) o += "  workgroupBarrier();\n";  // every invocation has read the last exchange
      // Split: the real parts go through f32 workgroup memory into e{m}, then the imaginary
      // parts straight back into the registers, so the whole exchange is here.
      auto write = [&](const std::string& part) {
        for (uint32_t q = 0; q < Q; ++q) {
          o += "  {\n    let j = t + " + u(q * T) + ";\n";
          o += "    let d = ((j >> " + u(log2u(ns)) + ") << " + u(log2u(ns * R)) + ") | (j & " + u(ns - 1) + ");\n";
          for (uint32_t r = 0; r < R; ++r)
            o += "    sm[sidx(line, d + " + u(r * ns) + ")] = " + reg(q + r * Q) + part + ";\n";
          o += "  }\n";
        }
      };
      if (s.split) {
        write(".x");
        o += "  workgroupBarrier();\n";
        for (uint32_t m = 0; m < P; ++m) o += "  e" + std::to_string(m) + " = sm[sidx(line, t + " + u(T * m) + ")];\n";
        o += "  workgroupBarrier();\n";
        write(".y");
        o += "  workgroupBarrier();\n";
        for (uint32_t m = 0; m < P; ++m)
          o += "  " + reg(m) + " = vec2<f32>(e" + std::to_string(m) + ", sm[sidx(line, t + " + u(T * m) + ")]);\n";
      } else {
        write("");
      }
    }
    ns *= R;
  }
  return o;
}

}  // namespace

std::vector<uint32_t> fft_stockham_radices(uint32_t L, uint32_t max_radix) {
  std::vector<uint32_t> r;
  if (L < 2 || (L & (L - 1)) || L > (1u << 16)) return r;
  if (max_radix != 4 && max_radix != 8) max_radix = 16;
  while (L % max_radix == 0) r.push_back(max_radix), L /= max_radix;
  if (L > 1) r.push_back(L);
  return r;
}

std::vector<std::pair<std::string, std::string>> fft_stockham_code(const FftShader& s) {
  const uint32_t L = s.len, P = s.radix[0], T = L / P;
  std::string decl, load, mid, store;
  for (uint32_t m = 0; m < P; ++m) {
    decl += "  var " + reg(m) + ": vec2<f32>;\n";
    if (s.split && s.np > 1) decl += "  var e" + std::to_string(m) + ": f32;\n";
    load += "  " + reg(m) + " = load(g, t + " + u(T * m) + ");\n";
    if (s.blue) mid += "  " + reg(m) + " = conj(cmul(" + reg(m) + ", tab[p.spec_off + t + " + u(T * m) + "]));\n";
  }
  // The second transform's first exchange must not overwrite what the first's last one reads.
  if (s.blue && s.np > 1) mid += "  workgroupBarrier();\n";
  if (s.twiddle) {
    // w_n^(c k) for k = t + T m: w_n^(c t) * (w_n^(c T))^m, two table pairs per invocation.
    store += "  {\n    let c = g % COLS;\n    let a = four_step_root(c * t);\n    let s1 = four_step_root(c * T);\n";
    store += powers("s", P);
    store += "    v0 = cmul(v0, a);\n";
    for (uint32_t m = 1; m < P; ++m)
      store += "    " + reg(m) + " = cmul(" + reg(m) + ", cmul(a, s" + std::to_string(m) + "));\n";
    store += "  }\n";
  }
  for (uint32_t m = 0; m < P; ++m) {
    const std::string k = "t + " + u(T * m);
    if (s.blue) store += "  store(g, " + k + ", cmul(conj(" + reg(m) + "), tab[p.chirp_off + " + k + "]));\n";
    else store += "  store(g, " + k + ", " + reg(m) + ");\n";
  }
  return {{"DECL", decl}, {"LOAD", load}, {"FFT", passes(s)}, {"BLUE_MID", mid}, {"STORE", store}};
}

}  // namespace wgt::webgpu
