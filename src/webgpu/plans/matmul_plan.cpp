// plan_matmul: the checks of what the matmul kernels can run and the choice of kernel, tile,
// storage forms and fusions (see matmul_plan.hpp). Pure: reads shapes, strides, offsets,
// dtypes and buffer sizes of the call's tensors, the adapter's capabilities and the tuning.
#include "webgpu/plans/matmul_plan.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

#include "webgpu/plans/rope_append.hpp"
#include "wgt/error.hpp"

namespace wgt::webgpu {
namespace {

// Extent of dim d of t (negative: from the end), 0 for a dim t lacks (the rank checks then
// reject the call). Cheaper than Tensor::size's checked lookup: plans run on every launch.
inline int64_t sz(const Tensor& t, int d) {
  const int i = d < 0 ? t.dim() + d : d;
  return i >= 0 && i < t.dim() ? t.shape()[static_cast<size_t>(i)] : 0;
}


constexpr uint64_t kU32Max = std::numeric_limits<uint32_t>::max();

uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// Largest element index a view can touch (offset included); used for the u32 index budget.
uint64_t max_index(const Tensor& t) {
  uint64_t m = static_cast<uint64_t>(t.offset());
  for (int d = 0; d < t.dim(); ++d)
    if (t.shape()[d] > 0) m += static_cast<uint64_t>(t.shape()[d] - 1) * static_cast<uint64_t>(t.strides()[d]);
  return m;
}
uint64_t max_index(const MatmulOperand& o) {
  uint64_t m = static_cast<uint64_t>(o.offset);
  for (int d = 0; d < o.dim; ++d)
    if (o.shape[d] > 0) m += static_cast<uint64_t>(o.shape[d] - 1) * static_cast<uint64_t>(o.strides[d]);
  return m;
}

bool has_negative_stride(const Tensor& t) {
  for (int64_t s : t.strides())
    if (s < 0) return true;
  return false;
}

struct Tile {
  uint32_t bm, bn, bk, tm, tn;
};

uint32_t tile_smem_bytes(const Tile& c, bool f16_compute) {
  const uint32_t vec4_bytes = f16_compute ? 8 : 16;
  return 2 * c.bk * (c.bm / 4 + 1 + c.bn / 4 + 1) * vec4_bytes;
}

// Empty when `c` runs on this device, else the reason.
std::string tile_problem(const Limits& l, const Tile& c, bool f16_compute) {
  if (c.tm % 4 || c.tn % 4) return "TM and TN must be multiples of 4";
  if (c.bm % c.tm || c.bn % c.tn) return "BM must be a multiple of TM and BN of TN";
  const uint32_t nt = (c.bm / c.tm) * (c.bn / c.tn);
  if ((c.bm * c.bk) % nt || (c.bn * c.bk) % nt)
    return "BM*BK and BN*BK must be multiples of the invocation count (BM/TM)*(BN/TN)=" + std::to_string(nt);
  if (nt > l.max_compute_invocations_per_workgroup || nt > l.max_compute_workgroup_size_x)
    return std::to_string(nt) + " invocations exceed the device limit " +
           std::to_string(std::min(l.max_compute_invocations_per_workgroup, l.max_compute_workgroup_size_x));
  if (tile_smem_bytes(c, f16_compute) > l.max_compute_workgroup_storage_size)
    return "needs " + std::to_string(tile_smem_bytes(c, f16_compute)) + " bytes of workgroup storage, device has " +
           std::to_string(l.max_compute_workgroup_storage_size);
  return {};
}

std::string dims_text(const uint32_t* v, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (i) s += 'x';
    s += std::to_string(v[i]);
  }
  return s;
}

Tile choose_tile(const Limits& l, const MatmulTuning& tu, uint64_t M, uint64_t N, uint64_t batch, bool f16_compute) {
  if (tu.tile) {
    const auto& f = *tu.tile;
    const Tile c{f[0], f[1], f[2], f[3], f[4]};
    if (std::string why = tile_problem(l, c, f16_compute); !why.empty())
      throw_error(ErrorKind::InvalidArgument, "matmul", "WGT_MATMUL_TILE=" + dims_text(f.data(), 5) + ": " + why);
    return c;
  }
  // The 128x128 tile (8x8 per invocation) has the best math/memory ratio but needs enough
  // tiles to fill the GPU (256 = about two per SM of a 132-SM H200); below that the 64x64
  // tile gives four times as many workgroups. WGT_MATMUL_TILE sweeps let this be re-tuned.
  const Tile big{128, 128, 8, 8, 8}, mid{64, 64, 8, 4, 4}, small{32, 32, 8, 4, 4};
  const uint64_t big_tiles = uint64_t{ceil_div(M, 128)} * ceil_div(N, 128) * batch;
  if (big_tiles >= 256 && tile_problem(l, big, f16_compute).empty()) return big;
  if (tile_problem(l, mid, f16_compute).empty()) return mid;
  return small;  // 64 invocations, 4.3 KB: within WebGPU's default limits
}

// The scalar gemv's (WG, KS), or false when the tuning turns the small-M kernels off.
bool choose_gemv(const Limits& l, const MatmulTuning& tu, bool kfast, uint32_t* wg, uint32_t* ks) {
  if (tu.gemv_off) return false;
  if (tu.gemv) {
    const auto& f = *tu.gemv;
    const bool ok = f[1] != 0 && (f[1] & (f[1] - 1)) == 0 && f[0] % f[1] == 0 &&
                    f[0] <= l.max_compute_invocations_per_workgroup && f[0] <= l.max_compute_workgroup_size_x &&
                    f[0] * kGemvMaxM * 4 <= l.max_compute_workgroup_storage_size;
    if (!ok)
      throw_error(ErrorKind::InvalidArgument, "matmul",
                  "WGT_MATMUL_GEMV=" + dims_text(f.data(), 2) +
                      ": expected WGxKS with KS a power of two dividing WG, WG within the device's "
                      "invocation limit (e.g. 256x64), or off");
    *wg = f[0], *ks = f[1];
    return true;
  }
  // K-contiguous B (x @ W^T) is best with 64 lanes sharing a column; N-contiguous B with
  // many columns side by side and 64 K-splitters (8 splitters leave too few loads in flight
  // per column). BENCHMARKS.md has the H200 measurements.
  if (kfast) return *wg = 256, *ks = 64, true;
  if (l.max_compute_invocations_per_workgroup >= 512 && l.max_compute_workgroup_size_x >= 512 &&
      512 * kGemvMaxM * 4 <= l.max_compute_workgroup_storage_size)
    return *wg = 512, *ks = 64, true;
  return *wg = 256, *ks = 8, true;
}

// The vector gemv's (WG, KS, RB) for K-contiguous B, or false where it does not run. KS = 32
// matches one NVIDIA subgroup per row (32 lanes x 16 bytes = 512 contiguous bytes); RB > 1
// reuses each read of A for RB rows (RB = 2 measured best on the H200, BENCHMARKS.md).
bool choose_gemv_vec(const Limits& l, const MatmulTuning& tu, uint32_t* wg, uint32_t* ks, uint32_t* rb) {
  if (tu.gemv_vec_off) return false;
  std::array<uint32_t, 3> c{256, 32, 2};
  if (tu.gemv_vec) {
    c = *tu.gemv_vec;
    if (c[1] == 0 || (c[1] & (c[1] - 1)) != 0 || c[0] % c[1] != 0 || c[2] == 0 || c[2] > 8)
      throw_error(ErrorKind::InvalidArgument, "matmul",
                  "WGT_MATMUL_GEMV_VEC=" + dims_text(c.data(), 3) +
                      ": expected WGxKS or WGxKSxRB with KS a power of two dividing WG and RB <= 8 "
                      "(e.g. 256x32 or 128x32x2), or off");
  }
  const uint32_t smem = (kGemvVecStage + c[0]) * 4;
  if (c[0] > l.max_compute_invocations_per_workgroup || c[0] > l.max_compute_workgroup_size_x ||
      smem > l.max_compute_workgroup_storage_size) {
    if (tu.gemv_vec)
      throw_error(ErrorKind::InvalidArgument, "matmul",
                  "WGT_MATMUL_GEMV_VEC: " + std::to_string(c[0]) + " invocations with " + std::to_string(smem) +
                      " bytes of workgroup memory exceed the device limits; use fewer invocations");
    return false;  // the default does not fit this device: the scalar gemv runs instead
  }
  *wg = c[0], *ks = c[1], *rb = c[2];
  return true;
}

}  // namespace

// ---- the subgroup-matrix kernel (shaders/matmul_sgmat.wgsl) ----

uint32_t sgmat_subgroups(const SgTile& t, const SgMatShape& sh) { return (t.bm / (t.fm * sh.m)) * (t.bn / (t.fn * sh.n)); }

namespace {
// Workgroup bytes: two staged A and B chunks (rows padded by 8 halves) and one f32 result
// fragment per subgroup.
uint32_t sgmat_smem_bytes(const SgTile& t, const SgMatShape& sh, bool b_kfast) {
  const uint32_t a = 2 * t.bm * (t.bk + 8) * 2;
  const uint32_t b = 2 * (b_kfast ? t.bn * (t.bk + 8) : t.bk * (t.bn + 8)) * 2;
  return a + b + sgmat_subgroups(t, sh) * sh.m * sh.n * 4;
}
}  // namespace

std::string sgmat_tile_problem(const Limits& l, const SgTile& t, const SgMatShape& sh, bool b_kfast) {
  if ((t.fm != 2 && t.fm != 4) || (t.fn != 2 && t.fn != 4)) return "FM and FN must each be 2 or 4";
  if (t.bm % (t.fm * sh.m) || t.bn % (t.fn * sh.n))
    return "BM must be a multiple of FM*" + std::to_string(sh.m) + " and BN of FN*" + std::to_string(sh.n);
  if (t.bk == 0 || t.bk % sh.k || t.bk % 4) return "BK must be a multiple of " + std::to_string(sh.k) + " and of 4";
  const uint32_t nt = sgmat_subgroups(t, sh) * sh.subgroup;
  if ((t.bm * t.bk / 4) % nt || (t.bn * t.bk / 4) % nt)
    return "BM*BK/4 and BN*BK/4 must be multiples of the invocation count " + std::to_string(nt);
  if ((sh.m * sh.n) % (sh.subgroup * 4)) return "the fragment does not split into vec4 per invocation";
  if (nt > l.max_compute_invocations_per_workgroup || nt > l.max_compute_workgroup_size_x)
    return std::to_string(nt) + " invocations exceed the device limit";
  if (t.bm > 0xffff || t.bn > 0xffff || t.bk > 0xffff || t.fm > 0xffff || t.fn > 0xffff) return "tile fields above 65535";
  if (sgmat_smem_bytes(t, sh, b_kfast) > l.max_compute_workgroup_storage_size)
    return "needs " + std::to_string(sgmat_smem_bytes(t, sh, b_kfast)) + " bytes of workgroup storage, device has " +
           std::to_string(l.max_compute_workgroup_storage_size);
  return {};
}

std::string sgmat_variant_problem(const SgTile& t, const SgMatShape& sh, SgVariant v) {
  const uint32_t nt = sgmat_subgroups(t, sh) * sh.subgroup;
  if (v == SgVariant::Wide && (t.bk % 8 || (t.bm * t.bk / 8) % nt || (t.bn * t.bk / 8) % nt))
    return "16-byte loads need BK % 8 == 0 and BM*BK/8, BN*BK/8 multiples of the invocation count " + std::to_string(nt);
  return {};
}

// The default tile where there are enough such tiles to fill the GPU (two per known
// multiprocessor, else 256): for N-contiguous B 128x128x32 (8 subgroups of 64x32), for
// K-contiguous B 128x256x16 (8 subgroups of 64x64), the fastest of the H200 sweeps
// (BENCHMARKS.md); else 64x64 (4 subgroups of 32x32); nullopt when neither default fits the
// device (the tiled kernel runs instead).
std::optional<SgTile> sgmat_default_tile(const Limits& l, const SgMatShape& sh, bool b_kfast, uint64_t M, uint64_t N,
                                         uint64_t batch) {
  const SgTile big = b_kfast ? SgTile{128, 256, 16, 64 / sh.m, 64 / sh.n} : SgTile{128, 128, 32, 64 / sh.m, 32 / sh.n};
  const SgTile mid{64, 64, 32, 32 / sh.m, 32 / sh.n};
  const uint64_t fill = l.compute_units ? 2ull * l.compute_units : 256;
  const uint64_t big_tiles = uint64_t{ceil_div(M, big.bm)} * ceil_div(N, big.bn) * batch;
  if (big_tiles >= fill && sgmat_tile_problem(l, big, sh, b_kfast).empty()) return big;
  if (sgmat_tile_problem(l, mid, sh, b_kfast).empty()) return mid;
  return std::nullopt;
}

namespace {

// The tile forced by the tuning (checked against the device), else the default.
std::optional<SgTile> choose_sgmat_tile(const Limits& l, const MatmulTuning& tu, const SgMatShape& sh, bool b_kfast, uint64_t M,
                         uint64_t N, uint64_t batch) {
  if (tu.sgmat) {
    const auto& f = *tu.sgmat;
    const SgTile t{f[0], f[1], f[2], f[3], f[4]};
    if (std::string why = sgmat_tile_problem(l, t, sh, b_kfast); !why.empty())
      throw_error(ErrorKind::InvalidArgument, "matmul", "WGT_MATMUL_SGMAT=" + dims_text(f.data(), 5) + ": " + why);
    return t;
  }
  return sgmat_default_tile(l, sh, b_kfast, M, N, batch);
}

// The subgroup-matrix shape when the sgmat kernel can run this product: native f16 operands
// and output, the adapter's f16 subgroup matrices, A K-contiguous and B contiguous along K or
// N, every vec4 load aligned (contiguous extent, other stride, offsets and batch strides % 4).
std::optional<SgMatShape> sgmat_eligible(const Caps& caps, const MatmulTuning& tu, const MatmulShader& s,
                                         const MatmulOperand& A, const MatmulOperand& B, uint64_t M, uint64_t N,
                                         uint64_t K, bool batch4_a, bool batch4_b) {
  if (tu.sgmat_off || s.a_store != MatmulStore::F16 || s.b_store != MatmulStore::F16) return std::nullopt;
  const bool a_ok = A.cs == 1 && K % 4 == 0 && (A.rs % 4 == 0 || M == 1) && batch4_a;
  const bool b_kfast = B.rs == 1 && B.cs != 1 && K > 1;
  const bool b_ok = batch4_b && (b_kfast ? (K % 4 == 0 && (B.cs % 4 == 0 || N == 1))
                                         : (B.cs == 1 && N % 4 == 0 && (B.rs % 4 == 0 || K == 1)));
  if (!a_ok || !b_ok) return std::nullopt;
  return sgmat_shape(caps);
}

const char* sgmat_variant_word(SgVariant v) {
  static const char* const kWords[] = {"auto", "staged", "wide"};
  return kWords[static_cast<int>(v)];
}

// The data path of an sgmat call. Auto takes the 16-byte loads (Wide: the fastest path on the
// H200 at every shape measured, docs/benchmark-history.md) where the tile allows them, else
// Staged; a forced Wide the tile cannot run is a typed error naming the setting. Either way the
// call keeps Staged where its layout does not allow 8-element (16-byte) accesses: A's K and row
// stride, B's contiguous extent and other stride, all offsets and batch strides multiples of 8
// (an 8-half group then never straddles the matrix or loses 16-byte alignment).
SgVariant choose_sgmat_variant(const MatmulTuning& tu, const SgTile& t, const SgMatShape& sh,
                               const MatmulOperand& A, const MatmulOperand& B, const BatchDims& dims, uint64_t N,
                               uint64_t K, bool b_kfast) {
  if (tu.sgmat_variant == SgVariant::Staged) return SgVariant::Staged;
  const std::string why = sgmat_variant_problem(t, sh, SgVariant::Wide);
  if (!why.empty()) {
    if (tu.sgmat_variant == SgVariant::Auto) return SgVariant::Staged;
    throw_error(ErrorKind::InvalidArgument, "matmul",
                std::string("WGT_MATMUL_SGMAT_VARIANT=") + sgmat_variant_word(tu.sgmat_variant) + " with tile " +
                    std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk) + "x" +
                    std::to_string(t.fm) + "x" + std::to_string(t.fn) + ": " + why);
  }
  bool ok = K % 8 == 0 && A.rs % 8 == 0 && A.offset % 8 == 0 && B.offset % 8 == 0 &&
            (b_kfast ? B.cs % 8 == 0 : (N % 8 == 0 && B.rs % 8 == 0));
  for (size_t i = 0; i < dims.n; ++i) ok = ok && dims.d[i].sa % 8 == 0 && dims.d[i].sb % 8 == 0;
  return ok ? SgVariant::Wide : SgVariant::Staged;
}

// How f16 operands are stored: native `f16` (needs shader-f16) or packed two per u32 and
// unpacked with unpack2x16float (core WGSL; f32 math). Packed can be forced where shader-f16
// exists (tests, benchmarks); without shader-f16 it is the only one.
bool f16_packed(const Features& f, const MatmulTuning& tu) {
  switch (tu.f16) {
    case F16Store::Auto: return !f.shader_f16;
    case F16Store::Packed: return true;
    case F16Store::Native:
      if (!f.shader_f16)
        throw_error(ErrorKind::InvalidArgument, "matmul",
                    "WGT_MATMUL_F16=native but the adapter lacks shader-f16; unset it or use packed");
      return false;
  }
  return false;
}

// The rope_append epilogue's own conditions (attrs.n_rot > 0; contract in src/ops/linalg.cpp):
// the dense product's part, then plans/rope_append.cpp's shared part.
std::string check_matmul_rope_append(const OpCall& call) {
  if (call.attrs.prologue != OpAttrs::Prologue::RmsNorm || call.attrs.has_bias || !call.attrs.transpose_b)
    return "the rope_append epilogue needs the RmsNorm prologue, transpose_b and no addend";
  const Tensor& out = call.outputs[0];
  if (out.dim() != 2) return "the rope_append epilogue takes one row (a decode step)";
  return check_rope_append(call, sz(out, 0), sz(out, 1));
}

// What the kernels can run at all (independent of the kernel choice).
std::string check_matmul(const Limits& limits, const OpCall& call) {
  const bool pro = call.attrs.prologue != OpAttrs::Prologue::None;
  const bool epi = call.attrs.n_rot > 0;  // the rope_append epilogue: caches at inputs[2], [3][, factors at [4]]
  const size_t n_in = 2 + (call.attrs.has_bias ? 1 : 0) + (epi ? 2 + (call.attrs.rope_factors ? 1 : 0) : 0) + (pro ? 1 : 0);
  if (call.inputs.size() != n_in || call.outputs.size() != 1)
    return "matmul takes two inputs (plus an addend, two caches and a prologue operand where flagged) and one output";
  if (epi)
    if (std::string why = check_matmul_rope_append(call); !why.empty()) return why;
  if (pro) {
    const Tensor &t = call.inputs.back(), &a0 = call.inputs[0];
    if (t.dtype() != a0.dtype()) return "the prologue operand must have the first operand's dtype";
    if (call.attrs.prologue == OpAttrs::Prologue::RmsNorm && (t.dim() != 1 || sz(t, 0) != sz(a0, -1)))
      return "the norm weight must be [K]";
    if (call.attrs.prologue == OpAttrs::Prologue::SiluMul && t.shape() != a0.shape())
      return "gate and up must have one shape";
  }
  if (call.attrs.has_bias) {
    const Tensor &c = call.inputs[2], &o = call.outputs[0];
    if (c.dtype() != o.dtype() || c.shape() != o.shape() || !c.is_contiguous())
      return "the addend must be contiguous with the output's shape and dtype";
  }
  const Tensor &a = call.inputs[0], &b = call.inputs[1], &out = call.outputs[0];
  const DType dt = a.dtype();
  // Mixed precision: f32 activations times f16 weights (converted exactly), f32 result.
  const bool mixed = dt == DType::F32 && b.dtype() == DType::F16 && out.dtype() == DType::F32;
  if (!mixed && (b.dtype() != dt || out.dtype() != dt))
    return "operands and output must share one dtype (or be f32 x f16 -> f32); cast() first";
  // f16 without shader-f16 runs the packed-u32 path (f32 math).
  if (dt != DType::F32 && dt != DType::F16)
    return std::string("dtype ") + dtype_name(dt) + " has no WebGPU matmul kernel; cast to f32 or f16";
  if (a.dim() < 2 || b.dim() < 2 || out.dim() < 2) return "operands must be at least 2-D (the front-end promotes 1-D operands)";
  const int64_t M = sz(a, -2), K = sz(a, -1);
  const int64_t N = call.attrs.transpose_b ? sz(b, -2) : sz(b, -1);
  const int64_t Kb = call.attrs.transpose_b ? sz(b, -1) : sz(b, -2);
  if (Kb != K || sz(out, -2) != M || sz(out, -1) != N || out.dim() < std::max(a.dim(), b.dim()))
    return "output shape does not match the operands";
  if (out.numel() != 0 && !out.is_contiguous()) return "the output must be contiguous";
  for (int d = 0; d < out.dim() - 2; ++d) {  // batch dims broadcast (right-aligned)
    const int da = d - (out.dim() - a.dim()), db = d - (out.dim() - b.dim());
    const int64_t n = out.shape()[d];
    if ((da >= 0 && a.shape()[da] != 1 && a.shape()[da] != n) || (db >= 0 && b.shape()[db] != 1 && b.shape()[db] != n))
      return "batch dims of the operands do not broadcast to the output's";
  }
  if (has_negative_stride(a) || has_negative_stride(b)) return "negative strides are not supported";
  for (const Tensor* t : {&a, &b, &out}) {
    if (max_index(*t) > kU32Max) return "tensor too large for 32-bit element indexing";
    if (t->storage() && t->storage()->nbytes() > limits.max_storage_buffer_binding_size)
      return "a buffer exceeds maxStorageBufferBindingSize (" + std::to_string(limits.max_storage_buffer_binding_size) +
             " bytes)";
  }
  if (limits.max_storage_buffers_per_shader_stage < 3) return "needs 3 storage buffers per stage";
  return {};
}

}  // namespace

MatmulOperand matmul_operand(const Tensor& t, bool transposed) {
  MatmulOperand o;
  o.dim = t.dim();
  const int r = t.dim();
  const bool unit = sz(t, -1) <= 1 || sz(t, -2) <= 1 || t.strides()[r - 1] == 1 || t.strides()[r - 2] == 1;
  o.compact = !unit;
  for (int d = 0; d < r; ++d) o.shape[d] = t.shape()[d];
  if (unit) {
    for (int d = 0; d < r; ++d) o.strides[d] = t.strides()[d];
    o.offset = t.offset();
    o.has_storage = t.storage() != nullptr;
    o.storage_bytes = o.has_storage ? t.storage()->nbytes() : 0;
  } else {  // the compacted copy: contiguous from offset 0, in a buffer of exactly its bytes
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) o.strides[d] = s, s *= t.shape()[d];
    o.offset = 0;
    o.has_storage = true;
    o.storage_bytes = static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype());
  }
  const int64_t s_row = o.strides[r - 2], s_col = o.strides[r - 1];
  // For B we describe (k, n): matmul has b[k][n], matmul_t has b[n][k].
  o.rs = transposed ? s_col : s_row;
  o.cs = transposed ? s_row : s_col;
  return o;
}

BatchDims fold_batch(const MatmulOperand& a, const MatmulOperand& b, const Tensor& out) {
  const int rank = out.dim() - 2;
  BatchDims dims;
  int64_t so = sz(out, -1) * sz(out, -2);
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t size = out.shape()[d];
    const int da = d - (rank - (a.dim - 2)), db = d - (rank - (b.dim - 2));
    const int64_t sa = (da >= 0 && a.shape[da] != 1) ? a.strides[da] : 0;
    const int64_t sb = (db >= 0 && b.shape[db] != 1) ? b.strides[db] : 0;
    if (size != 1) {
      if (dims.n) {
        BatchDim& in = dims.d[dims.n - 1];  // the next-inner kept dim
        if (sa == in.sa * in.size && sb == in.sb * in.size && so == in.so * in.size) {
          in.size *= size;  // the merged dim keeps the inner dim's strides
          so *= size;
          continue;
        }
      }
      dims.d[dims.n++] = {size, sa, sb, so};
    }
    so *= size;
  }
  std::reverse(dims.d.begin(), dims.d.begin() + static_cast<long>(dims.n));
  return dims;
}

std::optional<SgMatShape> sgmat_shape(const Caps& caps) {
  const Features& f = caps.features;
  const Limits& l = caps.limits;
  if (!f.subgroup_matrix || !f.shader_f16 || l.subgroup_min_size == 0 || l.subgroup_min_size != l.subgroup_max_size)
    return std::nullopt;
  // The shapes the kernel and its default tiles are written for, best first: 16x16x16 and
  // 16x8x16 (NVIDIA), then 8x8x8, the only f16 shape of sid's Mesa 26 lavapipe (subgroup
  // size 8), on which the kernel is checked without tensor cores (scripts/setup_lavapipe_sid.sh).
  constexpr uint32_t kShapes[][3] = {{16, 16, 16}, {16, 8, 16}, {8, 8, 8}};
  std::optional<SgMatShape> best;
  size_t best_rank = std::size(kShapes);
  for (const MatrixConfig& c : f.subgroup_matrix_configs) {
    if (c.component != 2 || c.result != 1) continue;  // f16 x f16 -> f32 (WGPUSubgroupMatrixComponentType)
    for (size_t r = 0; r < best_rank; ++r)
      if (c.m == kShapes[r][0] && c.n == kShapes[r][1] && c.k == kShapes[r][2]) {
        best = SgMatShape{c.m, c.n, c.k, l.subgroup_min_size};
        best_rank = r;
      }
  }
  // The epilogue splits one fragment into vec4 per invocation.
  if (best && (best->m * best->n) % (best->subgroup * 4) != 0) return std::nullopt;
  return best;
}

Planned<MatmulPlan> plan_matmul(const Caps& caps, const MatmulTuning& tu, const OpCall& call) {
  if (std::string why = check_matmul(caps.limits, call); !why.empty()) return Planned<MatmulPlan>::no(std::move(why));
  Planned<MatmulPlan> r;
  MatmulPlan& p = r.plan;
  MatmulShader& s = p.shader;
  const Tensor& out = call.outputs[0];
  if (out.numel() == 0) return r;  // nothing to run
  const Limits& l = caps.limits;
  const MatmulOperand A = matmul_operand(call.inputs[0], false);              // (m, k)
  const MatmulOperand B = matmul_operand(call.inputs[1], call.attrs.transpose_b);  // (k, n)
  p.compact_a = A.compact;
  p.compact_b = B.compact;
  const uint64_t M = static_cast<uint64_t>(sz(out, -2)), N = static_cast<uint64_t>(sz(out, -1));
  const uint64_t K = static_cast<uint64_t>(sz(call.inputs[0], -1));
  const bool f16 = out.dtype() == DType::F16;
  const BatchDims dims = fold_batch(A, B, out);
  uint64_t batch = 1;
  for (size_t i = 0; i < dims.n; ++i) batch *= static_cast<uint64_t>(dims.d[i].size);

  const bool a_kfast = !(A.rs == 1 && A.cs != 1 && K > 1);
  const bool b_kfast = B.rs == 1 && B.cs != 1 && K > 1;
  s.a_kfast = a_kfast;
  s.b_kfast = b_kfast;
  const bool packed = (f16 || call.inputs[1].dtype() == DType::F16) && f16_packed(caps.features, tu);
  s.a_store = !f16 ? MatmulStore::F32 : packed ? MatmulStore::F16Packed : MatmulStore::F16;
  // B may be f16 under an f32 A and output (mixed precision): its own storage form.
  const bool mixed = call.inputs[1].dtype() == DType::F16 && !f16;
  s.b_store = mixed ? (packed ? MatmulStore::F16Packed : MatmulStore::F16) : s.a_store;
  // Every batch offset a dispatch can start from is a multiple of 4 elements (vec4 loads need
  // 16-byte alignment for f32, 8 for f16 / packed f16).
  bool batch4_a = A.offset % 4 == 0, batch4_b = B.offset % 4 == 0;
  for (size_t i = 0; i < dims.n; ++i) batch4_a = batch4_a && dims.d[i].sa % 4 == 0, batch4_b = batch4_b && dims.d[i].sb % 4 == 0;
  uint32_t gwg = 0, gks = 0;
  const bool gemv_on = M <= kGemvMaxM && choose_gemv(l, tu, b_kfast, &gwg, &gks);
  // The vector gemv reads B 8 elements at a time: every row start must be 8-element aligned
  // (offset, row stride, batch strides; 16 bytes for packed f16 and vec4<u32>), and the
  // 8-element group holding B's last element must lie inside B's buffer.
  bool gemv_vec = false;
  uint32_t vwg = 0, vks = 0, vrb = 0;
  if (gemv_on && b_kfast && tu.vec) {
    bool ok = B.offset % 8 == 0 && (B.cs % 8 == 0 || N == 1) && B.has_storage;
    for (size_t i = 0; i < dims.n; ++i) ok = ok && dims.d[i].sb % 8 == 0;
    const uint64_t elem_bytes = s.b_store == MatmulStore::F32 ? 4 : 2;
    ok = ok && (max_index(B) / 8 + 1) * 8 * elem_bytes <= B.storage_bytes;
    if (ok) gemv_vec = choose_gemv_vec(l, tu, &vwg, &vks, &vrb);
  }
  // A prologue (attrs.prologue) is fused into the vector gemv's staging of A for f32 A (for
  // SiluMul: up must share A's strides, read at a fixed element delta from A's index, and A
  // must not have been compacted); anywhere else its op runs first into a scratch tensor and
  // the product follows on that.
  const OpAttrs::Prologue pro = call.attrs.prologue;
  const Tensor* pro_t = pro != OpAttrs::Prologue::None ? &call.inputs.back() : nullptr;
  bool fuse_p = pro_t && gemv_vec && s.a_store == MatmulStore::F32;
  if (fuse_p && pro == OpAttrs::Prologue::SiluMul)
    fuse_p = !A.compact && pro_t->strides() == call.inputs[0].strides() && pro_t->storage() != nullptr;
  // The rope_append epilogue (attrs.n_rot > 0) is fused where the fused norm applies to one
  // row whose invocations own whole interleaved rotation pairs: RB and the head dim even, the
  // normal (not neox) layout, an f32 output (the unfused q and k are f32, so the rotation sees
  // the same values), one dispatch (no batch, N within one grid), and six storage buffers
  // (seven with the freq factors, bound after the caches). Otherwise the product, then
  // kv_append_rope on its q, k and v columns.
  if (call.attrs.n_rot > 0) {
    const uint64_t max_rows = gemv_vec ? uint64_t{l.max_compute_workgroups_per_dimension} * (vwg / vks * vrb) : 0;
    const bool epi = fuse_p && pro == OpAttrs::Prologue::RmsNorm && M == 1 && vrb % 2 == 0 && !call.attrs.rope_neox &&
                     sz(call.inputs[2], 2) % 2 == 0 && batch == 1 && N <= max_rows &&
                     l.max_storage_buffers_per_shader_stage >= (call.attrs.rope_factors ? 7u : 6u);
    if (!epi) {
      p.route = MatmulRoute::RopeAppendUnfused;
      return r;
    }
    s.epi = 1;
    s.epi_freqs = call.attrs.rope_factors;
    s.cache_f16 = call.inputs[2].dtype() == DType::F16;
  }
  if (pro_t && !fuse_p) {
    p.route = MatmulRoute::PrologueFirst;
    return r;
  }
  if (gemv_vec) {
    s.kernel = MatmulKernel::GemvVec;
    s.wg = static_cast<uint16_t>(vwg), s.ks = static_cast<uint16_t>(vks), s.rb = static_cast<uint16_t>(vrb);
    s.mr = static_cast<uint8_t>(M);
    s.sg = tu.subgroups && caps.features.subgroups;
    s.out = s.a_store == MatmulStore::F16Packed ? MatmulOut::Atomic : MatmulOut::Scalar;
    // The addend is fused into the vector gemv's epilogue for f32 outputs, else one add
    // dispatch follows the product.
    s.fuse_c = call.attrs.has_bias && s.a_store == MatmulStore::F32;
    s.pro = !fuse_p ? 0 : pro == OpAttrs::Prologue::RmsNorm ? 1 : 2;
  } else if (gemv_on) {
    s.kernel = MatmulKernel::Gemv;
    s.wg = static_cast<uint16_t>(gwg), s.ks = static_cast<uint16_t>(gks);
    // Neighbouring columns belong to different invocations: packed f16 words need atomics.
    s.out = s.a_store == MatmulStore::F16Packed ? MatmulOut::Atomic : MatmulOut::Scalar;
  } else if (const auto [sh, tile] = [&]() -> std::pair<std::optional<SgMatShape>, std::optional<SgTile>> {
               std::optional<SgMatShape> shape = sgmat_eligible(caps, tu, s, A, B, M, N, K, batch4_a, batch4_b);
               if (!shape) return {};
               return {shape, choose_sgmat_tile(l, tu, *shape, b_kfast, M, N, batch)};
             }();
             tile) {
    s.kernel = MatmulKernel::SgMat;
    const SgTile& t = *tile;
    s.bm = static_cast<uint16_t>(t.bm), s.bn = static_cast<uint16_t>(t.bn), s.bk = static_cast<uint16_t>(t.bk);
    s.tm = static_cast<uint16_t>(t.fm), s.tn = static_cast<uint16_t>(t.fn);
    s.sm = static_cast<uint8_t>(sh->m), s.sn = static_cast<uint8_t>(sh->n), s.sk = static_cast<uint8_t>(sh->k);
    s.sgs = static_cast<uint8_t>(sh->subgroup);
    s.sgv = static_cast<uint8_t>(choose_sgmat_variant(tu, t, *sh, A, B, dims, N, K, b_kfast));
    s.abl = tu.sgmat_ablate;
    s.a_vec = s.b_vec = 1;
    s.out = (tu.vec && N % 4 == 0 && out.offset() % 4 == 0) ? MatmulOut::Vec4 : MatmulOut::Scalar;
  } else {
    s.kernel = MatmulKernel::Tiled;
    const bool acc16 = s.a_store == MatmulStore::F16 && tu.f16_acc;
    const Tile c = choose_tile(l, tu, M, N, batch, acc16);  // validated: every field fits u16
    s.acc16 = acc16;
    s.bm = static_cast<uint16_t>(c.bm), s.bn = static_cast<uint16_t>(c.bn), s.bk = static_cast<uint16_t>(c.bk);
    s.tm = static_cast<uint16_t>(c.tm), s.tn = static_cast<uint16_t>(c.tn);
    const uint32_t nt = (c.bm / c.tm) * (c.bn / c.tn);
    // vec4 loads along the unit-stride dim: its extent % 4 == 0 (a vec4 starting in range is
    // wholly in range), the other matrix stride and all offsets % 4 == 0, and the tile splits
    // into whole vec4 per invocation.
    s.a_vec = tu.vec && batch4_a && (c.bm * c.bk / 4) % nt == 0 &&
              (a_kfast ? (A.cs == 1 && K % 4 == 0 && c.bk % 4 == 0 && (A.rs % 4 == 0 || M == 1))
                       : (A.rs == 1 && M % 4 == 0 && A.cs % 4 == 0));
    s.b_vec = tu.vec && batch4_b && (c.bn * c.bk / 4) % nt == 0 &&
              (b_kfast ? (B.rs == 1 && K % 4 == 0 && c.bk % 4 == 0 && (B.cs % 4 == 0 || N == 1))
                       : (B.cs == 1 && N % 4 == 0 && (B.rs % 4 == 0 || K == 1)));
    if (s.a_store == MatmulStore::F16Packed)
      s.out = (N % 2 == 0 && out.offset() % 2 == 0) ? MatmulOut::Paired : MatmulOut::Atomic;
    else if (tu.vec && N % 4 == 0 && out.offset() % 4 == 0)
      s.out = MatmulOut::Vec4;
  }
  return r;
}

uint32_t MatmulPlan::row_tile() const {
  return shader.kernel == MatmulKernel::Tiled || shader.kernel == MatmulKernel::SgMat ? shader.bm : kGemvMaxM;
}

uint32_t MatmulPlan::col_tile() const {
  switch (shader.kernel) {
    case MatmulKernel::Tiled:
    case MatmulKernel::SgMat: return shader.bn;
    case MatmulKernel::Gemv: return shader.wg / shader.ks;
    case MatmulKernel::GemvVec: return shader.wg / shader.ks * shader.rb;
  }
  return 1;
}

PipelineKey MatmulPlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

namespace {
const char* tf(bool v) { return v ? "true" : "false"; }
}  // namespace

ShaderVariant MatmulPlan::variant() const {
  const MatmulShader& s = shader;
  ShaderVariant v;
  v.defines = {{"A_STORE", std::to_string(static_cast<int>(s.a_store))},
               {"B_STORE", std::to_string(static_cast<int>(s.b_store))},
               {"O_MODE", std::to_string(static_cast<int>(s.out))},
               {"FUSE_C", tf(s.fuse_c)},
               {"PRO", std::to_string(s.pro)}};
  // Bindings a, b, o, [c], [g], [K and V caches], [freq factors], params.
  const int g_bind = s.fuse_c ? 4 : 3;
  const int e_bind = g_bind + (s.pro ? 1 : 0);
  v.defines.push_back({"G_BIND", std::to_string(g_bind)});
  v.defines.push_back({"P_BIND", std::to_string(e_bind + (s.epi ? 2 : 0) + (s.epi_freqs ? 1 : 0))});
  switch (s.kernel) {
    case MatmulKernel::Tiled:
      v.shader = "matmul_tiled";
      v.defines.insert(v.defines.end(), {{"ACC16", tf(s.acc16)},
                                         {"BM", std::to_string(s.bm)}, {"BN", std::to_string(s.bn)},
                                         {"BK", std::to_string(s.bk)}, {"TM", std::to_string(s.tm)},
                                         {"TN", std::to_string(s.tn)}, {"A_KFAST", tf(s.a_kfast)},
                                         {"B_KFAST", tf(s.b_kfast)}, {"A_VEC", tf(s.a_vec)},
                                         {"B_VEC", tf(s.b_vec)}, {"B_VEC8", "false"}});
      break;
    case MatmulKernel::SgMat: {
      const bool wide = static_cast<SgVariant>(s.sgv) == SgVariant::Wide;
      v.shader = "matmul_sgmat";
      v.defines.insert(v.defines.end(), {{"SG_FETCH", wide ? "1" : "0"}, {"VEC8", tf(wide)},
                                         {"ABL", std::to_string(s.abl)}});
      v.defines.insert(v.defines.end(), {{"BM", std::to_string(s.bm)}, {"BN", std::to_string(s.bn)},
                                         {"BK", std::to_string(s.bk)}, {"FM", std::to_string(s.tm)},
                                         {"FN", std::to_string(s.tn)}, {"SM", std::to_string(s.sm)},
                                         {"SN", std::to_string(s.sn)}, {"SK", std::to_string(s.sk)},
                                         {"SGS", std::to_string(s.sgs)}, {"B_KFAST", tf(s.b_kfast)},
                                         {"A_VEC", "true"}, {"B_VEC", "true"}, {"B_VEC8", "false"}});
      break;
    }
    case MatmulKernel::Gemv:
      v.shader = "matmul_gemv";
      v.defines.insert(v.defines.end(), {{"WG", std::to_string(s.wg)}, {"KS", std::to_string(s.ks)},
                                         {"B_KFAST", tf(s.b_kfast)}, {"A_VEC", "false"},
                                         {"B_VEC", "false"}, {"B_VEC8", "false"}});
      break;
    case MatmulKernel::GemvVec: {
      const uint32_t kc = kGemvVecStage / (s.mr == 1 ? 1 : s.mr == 2 ? 2 : 4);  // a multiple of 8
      v.shader = "matmul_gemv_vec";
      v.defines.insert(v.defines.end(), {{"WG", std::to_string(s.wg)}, {"KS", std::to_string(s.ks)},
                                         {"RB", std::to_string(s.rb)}, {"MR", std::to_string(s.mr)},
                                         {"KC", std::to_string(kc)}, {"SG", tf(s.sg)},
                                         {"A_VEC", "false"}, {"B_VEC", "false"}, {"B_VEC8", "true"},
                                         {"EPI", tf(s.epi)}});
      if (s.epi) {
        v.defines.push_back({"E_BIND", std::to_string(e_bind)});
        v.defines.push_back({"E_BIND1", std::to_string(e_bind + 1)});
        v.defines.push_back({"CACHE_F16", tf(s.cache_f16)});
        v.defines.push_back({"ROPE_FREQS", s.epi_freqs ? "rope_freq_buffer" : "rope_freq_none"});
        if (s.epi_freqs) {
          v.defines.push_back({"FREQ_BIND", std::to_string(e_bind + 2)});
          v.defines.push_back({"FREQ_OFF", "p.r_f_off"});
        }
      }
      break;
    }
  }
  return v;
}

std::string MatmulPlan::name() const {
  const MatmulShader& s = shader;
  const bool mixed = s.b_store != s.a_store;
  const char* store_tag = mixed ? (s.b_store == MatmulStore::F16Packed ? " b:f16p" : " b:f16")
                          : s.a_store == MatmulStore::F16Packed ? " f16p"
                                                                : "";
  std::string n;
  switch (s.kernel) {
    case MatmulKernel::GemvVec:
      n = "gemv_vec " + std::to_string(s.wg) + "x" + std::to_string(s.ks);
      if (s.rb > 1) {
        n += 'x';
        n += std::to_string(s.rb);
      }
      n += " m";
      n += std::to_string(s.mr);
      n += s.sg ? " sg" : " tree";
      n += store_tag;
      break;
    case MatmulKernel::SgMat:
      n = "sgmat " + std::to_string(s.bm) + "x" + std::to_string(s.bn) + "x" + std::to_string(s.bk) + " " +
          std::to_string(s.tm) + "x" + std::to_string(s.tn) + " frag=" + std::to_string(s.sm) + "x" +
          std::to_string(s.sn) + "x" + std::to_string(s.sk) + (s.b_kfast ? " b:k" : " b:n") +
          (s.out == MatmulOut::Vec4 ? " o:v4" : "");
      n += std::string(" v:") + sgmat_variant_word(static_cast<SgVariant>(s.sgv));
      // Loud: an ablated kernel's results are wrong by design (MatmulTuning::sgmat_ablate).
      if (s.abl) n += " ABLATED-" + std::to_string(s.abl) + "(wrong results)";
      break;
    case MatmulKernel::Gemv:
      n = "gemv " + std::to_string(s.wg) + "x" + std::to_string(s.ks) + (s.b_kfast ? " kfast" : " nfast") + store_tag;
      break;
    case MatmulKernel::Tiled: {
      static const char* const kOut[] = {"", " o:v4", " o:pair", " o:atomic"};
      n = "tiled " + std::to_string(s.bm) + "x" + std::to_string(s.bn) + "x" + std::to_string(s.bk) + " " +
          std::to_string(s.tm) + "x" + std::to_string(s.tn) + " acc=" + (s.acc16 ? "f16" : "f32") +
          (s.a_kfast ? " a:k" : " a:m") + (s.b_kfast ? " b:k" : " b:n") + (s.a_vec ? " a:v4" : "") +
          (s.b_vec ? " b:v4" : "") + kOut[static_cast<int>(s.out)] + store_tag;
      break;
    }
  }
  if (s.fuse_c) n += " +c";
  if (s.pro) n += s.pro == 1 ? " +norm" : " +silu_mul";
  if (s.epi) n += s.epi_freqs ? " +rope_append+freqs" : " +rope_append";
  return n;
}

}  // namespace wgt::webgpu
