// WebGPU launcher for OpKind::MatMul (matmul and matmul_t): picks the tiled or a small-M
// kernel (shaders/matmul_tiled.wgsl; shaders/matmul_gemv_vec.wgsl for x @ W^T with 16-byte
// aligned rows of W, else shaders/matmul_gemv.wgsl), folds the broadcast batch dims
// and describes every operand by element strides so transposed views run without a copy.
//
// Subgroup-matrix (tensor-core) path: not reachable with the Dawn build we ship
// (bun-webgpu-linux-x64 0.1.7): on the H200 the adapter answers that
// ChromiumExperimentalSubgroupMatrix is not available, and lavapipe has no such feature, so there
// is no variant for it; f16 runs on the CUDA-core kernels (see docs in kernels/matmul.hpp):
// natively with shader-f16, else stored packed two per u32 and computed in f32. Operands whose
// unit-stride dim allows it are read as vec4 (fewer, wider loads; see matmul_tiled.wgsl).
// attrs.n_rot > 0 (KVCache::rms_norm_qkv_append_rope) adds RoPE and the KV-cache append as the
// vector gemv's epilogue (matmul_epi_rope_append.wgsl), or runs kv_append_rope after the product.
#include "webgpu/kernels/matmul.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "runtime/settings.hpp"
#include "webgpu/context.hpp"

namespace wgt::webgpu {
namespace {

// Mirrors `struct Params` of both matmul shaders; element units.
struct MatmulParams {
  uint32_t M, N, K, batch_base;
  uint32_t a_off, a_ms, a_ks, o_off;
  uint32_t b_off, b_ks, b_ns, o_rs;
  uint32_t o_bs, bd1, bd2, c_off;  // c_off: element offset of the addend (attrs.has_bias)
  uint32_t a_bs0, a_bs1, a_bs2, g_off;  // g_off: the prologue operand's element offset (norm weight) or delta to a (up)
  uint32_t b_bs0, b_bs1, b_bs2, eps_bits;  // eps_bits: the norm's eps as f32 bits
  // The rope_append epilogue (matmul_epi_rope_append.wgsl): cache row, q and k/v widths, head
  // dim, rotated dims, log2(base), freq_scale, element offset of the freq factors.
  uint32_t r_pos, r_qn, r_kvn, r_hd;
  uint32_t r_nrot;
  float r_base_log2, r_freq_scale;
  uint32_t r_f_off;
};
static_assert(sizeof(MatmulParams) == 128, "must match the WGSL Params struct");

struct TileConfig {
  uint32_t bm, bn, bk, tm, tn;
};
struct GemvConfig {
  uint32_t wg, ks, rb = 1;  // rb: rows of B per invocation (gemv_vec only)
};

constexpr uint32_t kGemvMaxM = 4;  // MMAX in matmul_gemv.wgsl
// A values staged per chunk by matmul_gemv_vec.wgsl (MR rows x KC): 8 KB of workgroup memory.
constexpr uint32_t kGemvVecStage = 2048;
constexpr uint64_t kU32Max = std::numeric_limits<uint32_t>::max();

thread_local std::string g_last_variant;

// Logical 2-D view of one operand: element (r, c) at off + r*rs + c*cs (+ batch strides).
struct Operand {
  Tensor t;
  int64_t rs = 0, cs = 0;
};

uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// Largest element index a view can touch (offset included); used for the u32 index budget.
uint64_t max_index(const Tensor& t) {
  uint64_t m = static_cast<uint64_t>(t.offset());
  for (int d = 0; d < t.dim(); ++d)
    if (t.shape()[d] > 0) m += static_cast<uint64_t>(t.shape()[d] - 1) * static_cast<uint64_t>(t.strides()[d]);
  return m;
}

bool has_negative_stride(const Tensor& t) {
  for (int64_t s : t.strides())
    if (s < 0) return true;
  return false;
}

uint32_t tile_smem_bytes(const TileConfig& c, bool f16_compute) {
  const uint32_t vec4_bytes = f16_compute ? 8 : 16;
  return 2 * c.bk * (c.bm / 4 + 1 + c.bn / 4 + 1) * vec4_bytes;
}

// Empty when `c` runs on this device, else the reason.
std::string tile_problem(const Context& ctx, const TileConfig& c, bool f16_compute) {
  if (c.tm % 4 || c.tn % 4) return "TM and TN must be multiples of 4";
  if (c.bm % c.tm || c.bn % c.tn) return "BM must be a multiple of TM and BN of TN";
  const uint32_t nt = (c.bm / c.tm) * (c.bn / c.tn);
  if ((c.bm * c.bk) % nt || (c.bn * c.bk) % nt)
    return "BM*BK and BN*BK must be multiples of the invocation count (BM/TM)*(BN/TN)=" + std::to_string(nt);
  const Limits& l = ctx.limits();
  if (nt > l.max_compute_invocations_per_workgroup || nt > l.max_compute_workgroup_size_x)
    return std::to_string(nt) + " invocations exceed the device limit " +
           std::to_string(std::min(l.max_compute_invocations_per_workgroup, l.max_compute_workgroup_size_x));
  if (tile_smem_bytes(c, f16_compute) > l.max_compute_workgroup_storage_size)
    return "needs " + std::to_string(tile_smem_bytes(c, f16_compute)) + " bytes of workgroup storage, device has " +
           std::to_string(l.max_compute_workgroup_storage_size);
  return {};
}

bool f16_accumulate() { return *settings().matmul_f16_acc; }

TileConfig choose_tile(const Context& ctx, uint64_t M, uint64_t N, uint64_t batch, bool f16_compute) {
  if (const auto& tile = *settings().matmul_tile) {
    const std::vector<uint32_t>& f = tile->v;  // five numbers (settings.cpp)
    TileConfig c{f[0], f[1], f[2], f[3], f[4]};
    if (std::string why = tile_problem(ctx, c, f16_compute); !why.empty())
      throw_error(ErrorKind::InvalidArgument, "matmul", "WGT_MATMUL_TILE=" + to_string(*tile) + ": " + why);
    return c;
  }
  // The 128x128 tile (8x8 per invocation) has the best math/memory ratio but needs enough
  // tiles to fill the GPU (256 = about two per SM of a 132-SM H200); below that the 64x64
  // tile gives four times as many workgroups. WGT_MATMUL_TILE sweeps let this be re-tuned.
  const TileConfig big{128, 128, 8, 8, 8}, mid{64, 64, 8, 4, 4}, small{32, 32, 8, 4, 4};
  const uint64_t big_tiles = uint64_t{ceil_div(M, 128)} * ceil_div(N, 128) * batch;
  if (big_tiles >= 256 && tile_problem(ctx, big, f16_compute).empty()) return big;
  if (tile_problem(ctx, mid, f16_compute).empty()) return mid;
  return small;  // 64 invocations, 4.3 KB: within WebGPU's default limits
}

GemvConfig choose_gemv(const Context& ctx, bool kfast, bool* enabled) {
  *enabled = true;
  if (const auto& gemv = *settings().matmul_gemv) {
    if (gemv->off) {
      *enabled = false;
      return {};
    }
    const std::vector<uint32_t>& f = gemv->v;  // two numbers (settings.cpp)
    const bool ok = (f[1] & (f[1] - 1)) == 0 && f[0] % f[1] == 0 &&
                    f[0] <= ctx.limits().max_compute_invocations_per_workgroup &&
                    f[0] <= ctx.limits().max_compute_workgroup_size_x &&
                    f[0] * kGemvMaxM * 4 <= ctx.limits().max_compute_workgroup_storage_size;
    if (!ok)
      throw_error(ErrorKind::InvalidArgument, "matmul",
                  "WGT_MATMUL_GEMV=" + to_string(*gemv) +
                      ": expected WGxKS with KS a power of two dividing WG, WG within the device's "
                      "invocation limit (e.g. 256x64), or off");
    return {f[0], f[1]};
  }
  // Measured on the H200 at M=1, K=N=4096: K-contiguous B (x @ W^T) is best with 64 lanes
  // sharing a column (256x64: 0.027 ms); N-contiguous B with 8 columns side by side and 64
  // K-splitters (512x64: 0.032 ms, against 0.120 ms for 256x8, whose 8 splitters leave too few
  // loads in flight per column).
  if (kfast) return GemvConfig{256, 64};
  const Limits& l = ctx.limits();
  if (l.max_compute_invocations_per_workgroup >= 512 && l.max_compute_workgroup_size_x >= 512 &&
      512 * kGemvMaxM * 4 <= l.max_compute_workgroup_storage_size)
    return GemvConfig{512, 64};
  return GemvConfig{256, 8};
}

// Vector gemv (matmul_gemv_vec.wgsl) for K-contiguous B: WG invocations, KS per B row, RB rows
// per invocation. WGT_MATMUL_GEMV_VEC = WGxKS[xRB] | off. KS = 32 matches one NVIDIA subgroup
// per row, so 32 lanes x 16 bytes read 512 contiguous bytes; RB > 1 reuses each read of A for
// RB rows. bench_webgpu_matmul --sweep --gemv-vec runs the alternatives (BENCHMARKS.md).
GemvConfig choose_gemv_vec(const Context& ctx, bool* enabled) {
  *enabled = true;
  // RB = 2 measured best on the H200 (BENCHMARKS.md, session 2: 3.39 vs 3.22 TB/s at RB = 1
  // on a 22016 x 4096 f16 weight; RB = 4 spills below both).
  GemvConfig c{256, 32, 2};
  const auto& forced = *settings().matmul_gemv_vec;
  if (forced) {
    if (forced->off) {
      *enabled = false;
      return {};
    }
    const uint32_t f[3] = {forced->v[0], forced->v[1], forced->v.size() == 3 ? forced->v[2] : 1};  // 2 or 3 numbers
    if ((f[1] & (f[1] - 1)) != 0 || f[0] % f[1] != 0 || f[2] > 8)
      throw_error(ErrorKind::InvalidArgument, "matmul",
                  "WGT_MATMUL_GEMV_VEC=" + to_string(*forced) +
                      ": expected WGxKS or WGxKSxRB with KS a power of two dividing WG and RB <= 8 "
                      "(e.g. 256x32 or 128x32x2), or off");
    c = {f[0], f[1], f[2]};
  }
  const Limits& l = ctx.limits();
  const uint32_t smem = (kGemvVecStage + c.wg) * 4;
  if (c.wg > l.max_compute_invocations_per_workgroup || c.wg > l.max_compute_workgroup_size_x ||
      smem > l.max_compute_workgroup_storage_size) {
    if (forced)
      throw_error(ErrorKind::InvalidArgument, "matmul",
                  "WGT_MATMUL_GEMV_VEC: " + std::to_string(c.wg) + " invocations with " + std::to_string(smem) +
                      " bytes of workgroup memory exceed the device limits; use fewer invocations");
    *enabled = false;  // the default does not fit this device: the scalar gemv runs instead
  }
  return c;
}

// WGT_MATMUL_SUBGROUPS=off forces the workgroup-tree reduction on a device with subgroups.
bool matmul_subgroups(const Context& ctx) { return *settings().matmul_subgroups && ctx.features().subgroups; }

// How f16 operands are stored in the shader: native `f16` (needs shader-f16) or packed two per
// u32 and unpacked with unpack2x16float (core WGSL; f32 math). WGT_MATMUL_F16=packed forces the
// packed path where shader-f16 exists (tests, benchmarks); without shader-f16 it is the only one.
bool f16_packed(const Context& ctx) {
  switch (*settings().matmul_f16) {
    case Settings::F16Store::Auto: return !ctx.features().shader_f16;
    case Settings::F16Store::Packed: return true;
    case Settings::F16Store::Native:
      if (!ctx.features().shader_f16)
        throw_error(ErrorKind::InvalidArgument, "matmul",
                    "WGT_MATMUL_F16=native but the adapter lacks shader-f16; unset it or use packed");
      return false;
  }
  return false;
}

// WGT_MATMUL_VEC=off keeps the scalar global loads/stores (for comparisons); default on.
bool vec_allowed() { return *settings().matmul_vec; }

enum class Store { F32, F16, F16Packed };

// Storage-access text of the matmul shaders for operand `x` ("a" or "b"): binding element
// type, scalar load (element index i) and vec4 load (vec4 index i). A binding has one element
// type, so the form the variant does not use is a zero constant.
void operand_io(std::vector<std::pair<std::string, std::string>>& defs, const std::string& x, Store st, bool vec) {
  const std::string X = x == "a" ? "A" : "B";
  std::string elem, ld1 = "CT()", ld4 = "vec4<CT>()";
  if (st == Store::F16Packed) {
    elem = vec ? "vec2<u32>" : "u32";
    if (vec) ld4 = "vec4<CT>(vec4<f32>(unpack2x16float(" + x + "[i].x), unpack2x16float(" + x + "[i].y)))";
    else ld1 = "CT(unpack2x16float(" + x + "[i >> 1u])[i & 1u])";
  } else {
    const std::string t = st == Store::F16 ? "f16" : "f32";
    elem = vec ? "vec4<" + t + ">" : t;
    if (vec) ld4 = "vec4<CT>(" + x + "[i])";
    else ld1 = "CT(" + x + "[i])";
  }
  defs.push_back({X + "_ELEM", elem});
  defs.push_back({"LD" + X + "1", ld1});
  defs.push_back({"LD" + X + "4", ld4});
}

// How outputs are written. Vec4: whole vec4<T> (N % 4 == 0, aligned offset). Paired: packed f16
// where every u32 word's two halves belong to one invocation (even offset and N). Atomic: packed
// f16 where a word may be shared by two invocations; each half is cleared and set with atomics
// so the neighbour's half survives.
enum class OutMode { Scalar, Vec4, Paired, Atomic };

void output_io(std::vector<std::pair<std::string, std::string>>& defs, Store st, OutMode mode) {
  const std::string t = st == Store::F16 ? "f16" : "f32";
  const std::string half = "let w = e >> 1u; let sh = (e & 1u) * 16u; let h = (pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu) << sh;";
  std::string elem, st4, st1;
  switch (mode) {
    case OutMode::Scalar:
      elem = t;
      st4 = "o[e] = " + t + "(v.x); o[e + 1u] = " + t + "(v.y); o[e + 2u] = " + t + "(v.z); o[e + 3u] = " + t + "(v.w);";
      st1 = "o[e] = " + t + "(v);";
      break;
    case OutMode::Vec4:
      elem = "vec4<" + t + ">";
      st4 = "o[e >> 2u] = vec4<" + t + ">(v);";
      st1 = "";  // unreachable: N % 4 == 0, so every 4-column group is whole
      break;
    case OutMode::Paired:
      elem = "u32";
      st4 = "o[e >> 1u] = pack2x16float(v.xy); o[(e >> 1u) + 1u] = pack2x16float(v.zw);";
      st1 = half + " o[w] = (o[w] & ~(0xffffu << sh)) | h;";
      break;
    case OutMode::Atomic:
      elem = "atomic<u32>";
      st4 = "st1(e, v.x); st1(e + 1u, v.y); st1(e + 2u, v.z); st1(e + 3u, v.w);";
      st1 = half + " atomicAnd(&o[w], ~(0xffffu << sh)); atomicOr(&o[w], h);";
      break;
  }
  defs.push_back({"O_ELEM", elem});
  defs.push_back({"ST4", st4});
  defs.push_back({"ST1", st1});
}

// One folded batch dim: size and element strides of a, b and the output.
struct BatchDim {
  int64_t size, sa, sb, so;
};

// Batch dims of the output with a's and b's broadcast strides; size-1 dims dropped and
// adjacent dims merged where all three operands allow it. Outermost first.
std::vector<BatchDim> fold_batch(const Tensor& a, const Tensor& b, const Tensor& out) {
  const int rank = out.dim() - 2;
  std::vector<BatchDim> dims;
  int64_t so = out.size(-1) * out.size(-2);
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t size = out.shape()[d];
    const int da = d - (rank - (a.dim() - 2)), db = d - (rank - (b.dim() - 2));
    const int64_t sa = (da >= 0 && a.shape()[da] != 1) ? a.strides()[da] : 0;
    const int64_t sb = (db >= 0 && b.shape()[db] != 1) ? b.strides()[db] : 0;
    if (size != 1) {
      if (!dims.empty()) {
        BatchDim& in = dims.back();  // the next-inner kept dim
        if (sa == in.sa * in.size && sb == in.sb * in.size && so == in.so * in.size) {
          in.size *= size;  // the merged dim keeps the inner dim's strides
          so *= size;
          continue;
        }
      }
      dims.push_back({size, sa, sb, so});
    }
    so *= size;
  }
  std::reverse(dims.begin(), dims.end());
  return dims;
}

}  // namespace

const std::string& matmul_last_variant() { return g_last_variant; }

namespace {

// The rope_append epilogue's own conditions (attrs.n_rot > 0; contract in src/ops/linalg.cpp).
Support check_rope_append(const OpCall& call) {
  if (call.attrs.prologue != OpAttrs::Prologue::RmsNorm || call.attrs.has_bias || !call.attrs.transpose_b)
    return Support::no("the rope_append epilogue needs the RmsNorm prologue, transpose_b and no addend");
  const Tensor &out = call.outputs[0], &kc = call.inputs[2], &vc = call.inputs[3];
  if (out.dim() != 2 || out.size(0) != 1) return Support::no("the rope_append epilogue takes one row (a decode step)");
  for (const Tensor* c : {&kc, &vc}) {
    if (c->dim() != 3 || !c->is_contiguous() || c->offset() != 0 || (c->dtype() != DType::F32 && c->dtype() != DType::F16))
      return Support::no("the caches must be contiguous f32 or f16 [C, Hkv, D] from offset 0");
  }
  if (kc.shape() != vc.shape() || kc.dtype() != vc.dtype()) return Support::no("the caches must share shape and dtype");
  if (kc.numel() >= (int64_t{1} << 31)) return Support::no("more than 2^31 elements in one cache");
  if (kc.storage() == vc.storage() || out.storage() == kc.storage() || out.storage() == vc.storage())
    return Support::no("the caches and the output must be distinct buffers");
  const int64_t D = kc.size(2), kvn = kc.size(1) * D, qn = out.size(1) - 2 * kvn;
  if (qn <= 0 || qn % D != 0) return Support::no("the output must be [1, (H + 2 Hkv) * D]");
  if (call.attrs.n_rot % 2 != 0 || call.attrs.n_rot > D) return Support::no("n_rot must be even and <= D");
  const int64_t pos = call.attrs.pos_offset;
  if (pos < 0 || pos >= kc.size(0)) return Support::no("the cache row is out of range");
  if (pos >= (int64_t{1} << 24)) return Support::no("positions above 2^24 are not exact in f32");
  return Support::yes();
}

Support check_matmul(const Context& ctx, const OpCall& call) {
  const bool pro = call.attrs.prologue != OpAttrs::Prologue::None;
  const bool epi = call.attrs.n_rot > 0;  // the rope_append epilogue: caches at inputs[2], [3][, factors at [4]]
  const size_t n_in = 2 + (call.attrs.has_bias ? 1 : 0) + (epi ? 2 + (call.attrs.rope_factors ? 1 : 0) : 0) + (pro ? 1 : 0);
  if (call.inputs.size() != n_in || call.outputs.size() != 1)
    return Support::no("matmul takes two inputs (plus an addend, two caches and a prologue operand where flagged) and one output");
  if (epi)
    if (Support s = check_rope_append(call); !s.ok) return s;
  if (pro) {
    const Tensor &t = call.inputs.back(), &a0 = call.inputs[0];
    if (t.dtype() != a0.dtype()) return Support::no("the prologue operand must have the first operand's dtype");
    if (call.attrs.prologue == OpAttrs::Prologue::RmsNorm && (t.dim() != 1 || t.size(0) != a0.size(-1)))
      return Support::no("the norm weight must be [K]");
    if (call.attrs.prologue == OpAttrs::Prologue::SiluMul && t.shape() != a0.shape())
      return Support::no("gate and up must have one shape");
  }
  if (call.attrs.has_bias) {
    const Tensor &c = call.inputs[2], &o = call.outputs[0];
    if (c.dtype() != o.dtype() || c.shape() != o.shape() || !c.is_contiguous())
      return Support::no("the addend must be contiguous with the output's shape and dtype");
  }
  const Tensor &a = call.inputs[0], &b = call.inputs[1], &out = call.outputs[0];
  const DType dt = a.dtype();
  // Mixed precision: f32 activations times f16 weights (converted exactly), f32 result.
  const bool mixed = dt == DType::F32 && b.dtype() == DType::F16 && out.dtype() == DType::F32;
  if (!mixed && (b.dtype() != dt || out.dtype() != dt))
    return Support::no("operands and output must share one dtype (or be f32 x f16 -> f32); cast() first");
  // f16 without shader-f16 runs the packed-u32 path (f32 math).
  if (dt != DType::F32 && dt != DType::F16)
    return Support::no(std::string("dtype ") + dtype_name(dt) + " has no WebGPU matmul kernel; cast to f32 or f16");
  if (a.dim() < 2 || b.dim() < 2 || out.dim() < 2)
    return Support::no("operands must be at least 2-D (the front-end promotes 1-D operands)");
  const int64_t M = a.size(-2), K = a.size(-1);
  const int64_t N = call.attrs.transpose_b ? b.size(-2) : b.size(-1);
  const int64_t Kb = call.attrs.transpose_b ? b.size(-1) : b.size(-2);
  if (Kb != K || out.size(-2) != M || out.size(-1) != N || out.dim() < std::max(a.dim(), b.dim()))
    return Support::no("output shape does not match the operands");
  if (out.numel() != 0 && !out.is_contiguous()) return Support::no("the output must be contiguous");
  for (int d = 0; d < out.dim() - 2; ++d) {  // batch dims broadcast (right-aligned)
    const int da = d - (out.dim() - a.dim()), db = d - (out.dim() - b.dim());
    const int64_t n = out.shape()[d];
    if ((da >= 0 && a.shape()[da] != 1 && a.shape()[da] != n) || (db >= 0 && b.shape()[db] != 1 && b.shape()[db] != n))
      return Support::no("batch dims of the operands do not broadcast to the output's");
  }
  if (has_negative_stride(a) || has_negative_stride(b)) return Support::no("negative strides are not supported");
  for (const Tensor* t : {&a, &b, &out}) {
    if (max_index(*t) > kU32Max) return Support::no("tensor too large for 32-bit element indexing");
    if (t->storage() && t->storage()->nbytes() > ctx.limits().max_storage_buffer_binding_size)
      return Support::no("a buffer exceeds maxStorageBufferBindingSize (" +
                         std::to_string(ctx.limits().max_storage_buffer_binding_size) + " bytes)");
  }
  if (ctx.limits().max_storage_buffers_per_shader_stage < 3) return Support::no("needs 3 storage buffers per stage");
  return Support::yes();
}

// A view the kernels read directly when one of its two matrix strides is the unit one (any
// batch strides); otherwise one compaction makes it so.
Operand operand(Context& ctx, const Tensor& t, bool transposed) {
  auto unit = [](const Tensor& x) {
    return x.size(-1) <= 1 || x.size(-2) <= 1 || x.strides()[x.dim() - 1] == 1 || x.strides()[x.dim() - 2] == 1;
  };
  Operand op;
  op.t = unit(t) ? t : ctx.compact(t);
  const int64_t s_row = op.t.strides()[op.t.dim() - 2], s_col = op.t.strides()[op.t.dim() - 1];
  // For B we describe (k, n): matmul has b[k][n], matmul_t has b[n][k].
  op.rs = transposed ? s_col : s_row;
  op.cs = transposed ? s_row : s_col;
  return op;
}

void launch_matmul(Context& ctx, OpCall& call);

// The rope_append epilogue unfused: the product (with its prologue) into the output, then
// kv_append_rope on the output's q, k and v columns (q rotated in place, rope(k) and v
// appended; one dispatch where kernels/nn.cpp's conditions hold).
void rope_append_unfused(Context& ctx, OpCall& call) {
  Tensor& out = call.outputs[0];
  OpCall mm{OpKind::MatMul, call.name, {call.inputs[0], call.inputs[1], call.inputs.back()}, {out}, call.attrs, 0.0, {}};
  mm.attrs.n_rot = 0;
  mm.attrs.rope_factors = false;
  launch_matmul(ctx, mm);
  const Tensor &kc = call.inputs[2], &vc = call.inputs[3];
  const int64_t D = kc.size(2), kvn = kc.size(1) * D, qn = out.size(1) - 2 * kvn;
  OpCall ap{OpKind::KVAppend, "kv_append_rope",
            {kc, out.slice(1, qn, qn + kvn).view({1, kc.size(1), D}), vc,
             out.slice(1, qn + kvn, qn + 2 * kvn).view({1, kc.size(1), D}), out.slice(1, 0, qn).view({1, qn / D, D})},
            {}, call.attrs, 0.0, {}};
  if (call.attrs.rope_factors) ap.inputs.push_back(call.inputs[4]);
  ap.attrs.prologue = OpAttrs::Prologue::None;
  ctx.run_op(ap);
}

void launch_matmul(Context& ctx, OpCall& call) {
  Tensor& out = call.outputs[0];
  if (out.numel() == 0) return;
  const bool tb = call.attrs.transpose_b;
  Operand A = operand(ctx, call.inputs[0], false);  // (m, k): rs = m stride, cs = k stride
  Operand B = operand(ctx, call.inputs[1], tb);     // (k, n): rs = k stride, cs = n stride
  const uint64_t M = static_cast<uint64_t>(out.size(-2)), N = static_cast<uint64_t>(out.size(-1));
  const uint64_t K = static_cast<uint64_t>(A.t.size(-1));
  const bool f16 = out.dtype() == DType::F16;

  std::vector<BatchDim> dims = fold_batch(A.t, B.t, out);
  // The shader decodes up to three batch dims; any further (outer) ones loop here.
  const size_t host_dims = dims.size() > 3 ? dims.size() - 3 : 0;
  std::vector<BatchDim> dev(dims.begin() + static_cast<long>(host_dims), dims.end());
  while (dev.size() < 3) dev.insert(dev.begin(), BatchDim{1, 0, 0, 0});
  const uint64_t dev_batch = static_cast<uint64_t>(dev[0].size * dev[1].size * dev[2].size);
  uint64_t host_batch = 1;
  for (size_t i = 0; i < host_dims; ++i) host_batch *= static_cast<uint64_t>(dims[i].size);

  // Kernel choice.
  const bool a_kfast = !(A.rs == 1 && A.cs != 1 && K > 1);
  const bool b_kfast = B.rs == 1 && B.cs != 1 && K > 1;
  const Store store = !f16 ? Store::F32 : (f16_packed(ctx) ? Store::F16Packed : Store::F16);
  // B may be f16 under an f32 A and output (mixed precision): its own storage form.
  const bool mixed = B.t.dtype() == DType::F16 && !f16;
  const Store store_b = mixed ? (f16_packed(ctx) ? Store::F16Packed : Store::F16) : store;
  const char* enable = store == Store::F16 || store_b == Store::F16 ? "enable f16;" : "";
  const char* store_tag = mixed ? (store_b == Store::F16Packed ? " b:f16p" : " b:f16") : store == Store::F16Packed ? " f16p" : "";
  // Every batch offset a dispatch can start from is a multiple of 4 elements (vec4 loads need
  // 16-byte alignment for f32, 8 for f16 / packed f16).
  bool batch4_a = A.t.offset() % 4 == 0, batch4_b = B.t.offset() % 4 == 0;
  for (const BatchDim& d : dims) batch4_a = batch4_a && d.sa % 4 == 0, batch4_b = batch4_b && d.sb % 4 == 0;
  bool gemv_on = false;
  GemvConfig gc{};
  if (M <= kGemvMaxM) gc = choose_gemv(ctx, b_kfast, &gemv_on);
  // The vector gemv reads B 8 elements at a time: every row start must be 8-element aligned
  // (offset, row stride, batch strides; 16 bytes for packed f16 and vec4<u32>), and the
  // 8-element group holding B's last element must lie inside B's storage.
  bool gemv_vec = false;
  GemvConfig vc{};
  if (gemv_on && b_kfast && vec_allowed()) {
    bool ok = B.t.offset() % 8 == 0 && (B.cs % 8 == 0 || N == 1) && B.t.storage() != nullptr;
    for (const BatchDim& d : dims) ok = ok && d.sb % 8 == 0;
    const uint64_t elem_bytes = store_b == Store::F32 ? 4 : 2;
    ok = ok && (max_index(B.t) / 8 + 1) * 8 * elem_bytes <= B.t.storage()->nbytes();
    if (ok) vc = choose_gemv_vec(ctx, &gemv_vec);
  }
  // A prologue (attrs.prologue) is fused into the vector gemv's staging of A for f32 A (for
  // SiluMul: up must share A's strides, read at a fixed element delta from A's index, and A
  // must not have been compacted); anywhere else its op runs first into a scratch tensor and
  // the product follows on that.
  const OpAttrs::Prologue pro = call.attrs.prologue;
  const Tensor* pro_t = pro != OpAttrs::Prologue::None ? &call.inputs.back() : nullptr;
  bool fuse_p = pro_t && gemv_vec && store == Store::F32;
  if (fuse_p && pro == OpAttrs::Prologue::SiluMul)
    fuse_p = A.t.storage() == call.inputs[0].storage() && A.t.offset() == call.inputs[0].offset() &&
             pro_t->strides() == A.t.strides() && pro_t->storage() != nullptr;
  // The rope_append epilogue (attrs.n_rot > 0) is fused where the fused norm applies to one
  // row whose invocations own whole interleaved rotation pairs: RB and the head dim even, the
  // normal (not neox) layout, an f32 output (the unfused q and k are f32, so the rotation sees
  // the same values), one dispatch (no batch, N within one grid), and six storage buffers
  // (seven with the freq factors, bound after the caches).
  // Otherwise the product, then kv_append_rope on its q, k and v columns.
  const bool epi_req = call.attrs.n_rot > 0;
  bool epi = false;
  if (epi_req) {
    const Limits& l = ctx.limits();
    const uint64_t max_rows = uint64_t{l.max_compute_workgroups_per_dimension} * (vc.wg / vc.ks * vc.rb);
    epi = fuse_p && pro == OpAttrs::Prologue::RmsNorm && M == 1 && vc.rb % 2 == 0 && !call.attrs.rope_neox &&
          call.inputs[2].size(2) % 2 == 0 && dev_batch * host_batch == 1 && N <= max_rows &&
          l.max_storage_buffers_per_shader_stage >= (call.attrs.rope_factors ? 7u : 6u);
    if (!epi) return rope_append_unfused(ctx, call);
  }
  if (pro_t && !fuse_p) {
    OpCall plain = ctx.run_prologue(call);
    launch_matmul(ctx, plain);
    return;
  }
  ShaderVariant v;
  uint32_t row_tile = 0, col_tile = 0;
  if (gemv_vec) {
    const uint32_t mr = static_cast<uint32_t>(M);
    const uint32_t kc = kGemvVecStage / (mr == 1 ? 1 : mr == 2 ? 2 : 4);  // a multiple of 8
    const bool sg = matmul_subgroups(ctx);
    v.shader = "matmul_gemv_vec";
    v.defines = {{"ENABLE", std::string(enable) + (sg ? " enable subgroups;" : "")},
                 {"WG", std::to_string(vc.wg)}, {"KS", std::to_string(vc.ks)}, {"RB", std::to_string(vc.rb)},
                 {"MR", std::to_string(mr)}, {"KC", std::to_string(kc)}, {"SG", sg ? "true" : "false"},
                 {"SG_ARGS", sg ? ", @builtin(subgroup_invocation_id) sid: u32" : ""},
                 // A subgroup whose invocations all share row r stores its sum in its leader's
                 // slot and 0 elsewhere; any other subgroup stores its invocations' partials.
                 {"SG_FN", sg ? "fn sg_part(v: f32, r: u32, sid: u32) -> f32 { let t = subgroupAdd(v); "
                                "let one = subgroupAll(r == subgroupBroadcastFirst(r)); "
                                "return select(v, select(0.0, t, sid == 0u), one); }"
                              : ""},
                 {"PART", sg ? "sg_part(v, r, sid)" : "v"}};
    operand_io(v.defines, "a", store, false);
    std::string b_elem, ldb;
    if (store_b == Store::F16Packed) {
      b_elem = "vec4<u32>";
      ldb = "fn ldb8(i: u32) -> array<vec4<f32>, 2> { let w = b[i >> 3u]; return array<vec4<f32>, 2>("
            "vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)), vec4<f32>(unpack2x16float(w.z), "
            "unpack2x16float(w.w))); }\n"
            "fn ldb1(i: u32) -> f32 { return unpack2x16float(b[i >> 3u][(i >> 1u) & 3u])[i & 1u]; }";
    } else {
      b_elem = store_b == Store::F16 ? "vec4<f16>" : "vec4<f32>";
      ldb = "fn ldb8(i: u32) -> array<vec4<f32>, 2> { return array<vec4<f32>, 2>(vec4<f32>(b[i >> 2u]), "
            "vec4<f32>(b[(i >> 2u) + 1u])); }\n"
            "fn ldb1(i: u32) -> f32 { return f32(b[i >> 2u][i & 3u]); }";
    }
    v.defines.push_back({"B_ELEM", b_elem});
    v.defines.push_back({"LDB", ldb});
    output_io(v.defines, store, store == Store::F16Packed ? OutMode::Atomic : OutMode::Scalar);
    row_tile = kGemvMaxM;
    col_tile = vc.wg / vc.ks * vc.rb;
    g_last_variant = "gemv_vec " + std::to_string(vc.wg) + "x" + std::to_string(vc.ks) +
                     (vc.rb > 1 ? "x" + std::to_string(vc.rb) : std::string()) + " m" + std::to_string(mr) +
                     (sg ? " sg" : " tree") + store_tag;
  } else if (gemv_on) {
    v.shader = "matmul_gemv";
    v.defines = {{"ENABLE", enable}, {"WG", std::to_string(gc.wg)}, {"KS", std::to_string(gc.ks)},
                 {"B_KFAST", b_kfast ? "true" : "false"}};
    operand_io(v.defines, "a", store, false);
    operand_io(v.defines, "b", store_b, false);
    // Neighbouring columns belong to different invocations: packed f16 words need atomics.
    output_io(v.defines, store, store == Store::F16Packed ? OutMode::Atomic : OutMode::Scalar);
    row_tile = kGemvMaxM;
    col_tile = gc.wg / gc.ks;
    g_last_variant = "gemv " + std::to_string(gc.wg) + "x" + std::to_string(gc.ks) + (b_kfast ? " kfast" : " nfast") +
                     store_tag;
  } else {
    const bool acc16 = store == Store::F16 && f16_accumulate();
    const TileConfig c = choose_tile(ctx, M, N, dev_batch * host_batch, acc16);
    const uint32_t nt = (c.bm / c.tm) * (c.bn / c.tn);
    const bool vec = vec_allowed();
    // vec4 loads along the unit-stride dim: its extent % 4 == 0 (a vec4 starting in range is
    // wholly in range), the other matrix stride and all offsets % 4 == 0, and the tile splits
    // into whole vec4 per invocation.
    const bool a_vec = vec && batch4_a && (c.bm * c.bk / 4) % nt == 0 &&
                       (a_kfast ? (A.cs == 1 && K % 4 == 0 && c.bk % 4 == 0 && (A.rs % 4 == 0 || M == 1))
                                : (A.rs == 1 && M % 4 == 0 && A.cs % 4 == 0));
    const bool b_vec = vec && batch4_b && (c.bn * c.bk / 4) % nt == 0 &&
                       (b_kfast ? (B.rs == 1 && K % 4 == 0 && c.bk % 4 == 0 && (B.cs % 4 == 0 || N == 1))
                                : (B.cs == 1 && N % 4 == 0 && (B.rs % 4 == 0 || K == 1)));
    OutMode om = OutMode::Scalar;
    if (store == Store::F16Packed) om = (N % 2 == 0 && out.offset() % 2 == 0) ? OutMode::Paired : OutMode::Atomic;
    else if (vec && N % 4 == 0 && out.offset() % 4 == 0) om = OutMode::Vec4;
    v.shader = "matmul_tiled";
    v.defines = {{"ENABLE", enable}, {"CT", acc16 ? "f16" : "f32"},
                 {"BM", std::to_string(c.bm)}, {"BN", std::to_string(c.bn)}, {"BK", std::to_string(c.bk)},
                 {"TM", std::to_string(c.tm)}, {"TN", std::to_string(c.tn)},
                 {"A_KFAST", a_kfast ? "true" : "false"}, {"B_KFAST", b_kfast ? "true" : "false"},
                 {"A_VEC", a_vec ? "true" : "false"}, {"B_VEC", b_vec ? "true" : "false"}};
    operand_io(v.defines, "a", store, a_vec);
    operand_io(v.defines, "b", store_b, b_vec);
    output_io(v.defines, store, om);
    row_tile = c.bm;
    col_tile = c.bn;
    static const char* const kOut[] = {"", " o:v4", " o:pair", " o:atomic"};
    g_last_variant = "tiled " + std::to_string(c.bm) + "x" + std::to_string(c.bn) + "x" + std::to_string(c.bk) + " " +
                     std::to_string(c.tm) + "x" + std::to_string(c.tn) + " acc=" + (acc16 ? "f16" : "f32") +
                     (a_kfast ? " a:k" : " a:m") + (b_kfast ? " b:k" : " b:n") + (a_vec ? " a:v4" : "") +
                     (b_vec ? " b:v4" : "") + kOut[static_cast<int>(om)] + store_tag;
  }
  // The addend: fused into the vector gemv's epilogue for f32 outputs, else one add dispatch
  // after the product (below).
  const bool has_c = call.attrs.has_bias;
  const bool fuse_c = has_c && gemv_vec && store == Store::F32;
  v.defines.push_back({"C_DECL", fuse_c ? "@group(0) @binding(3) var<storage, read> c: array<f32>;" : ""});
  const int g_bind = fuse_c ? 4 : 3;
  v.defines.push_back({"G_DECL", fuse_p ? "@group(0) @binding(" + std::to_string(g_bind) + ") var<storage, read> g: array<f32>;" : ""});
  const int e_bind = g_bind + (fuse_p ? 1 : 0);
  const bool epi_f = epi && call.attrs.rope_factors;  // the freq factors, bound after the caches
  v.defines.push_back({"P_BIND", std::to_string(e_bind + (epi ? 2 : 0) + (epi_f ? 1 : 0))});
  if (gemv_vec) {
    v.defines.push_back({"EPI_INC", epi ? "matmul_epi_rope_append" : "matmul_epi_store"});
    if (epi) {
      v.defines.push_back({"E_BIND", std::to_string(e_bind)});
      v.defines.push_back({"E_BIND1", std::to_string(e_bind + 1)});
      v.defines.push_back({"CACHE_F16", call.inputs[2].dtype() == DType::F16 ? "true" : "false"});
      v.defines.push_back({"ROPE_FREQS", epi_f ? "rope_freq_buffer" : "rope_freq_none"});
      if (epi_f) {
        v.defines.push_back({"FREQ_BIND", std::to_string(e_bind + 2)});
        v.defines.push_back({"FREQ_OFF", "p.r_f_off"});
      }
    }
    v.defines.push_back({"CADD", fuse_c ? "return c[e - p.o_off + p.c_off];" : "return 0.0;"});
    v.defines.push_back({"PRO", !fuse_p ? "0" : pro == OpAttrs::Prologue::RmsNorm ? "1" : "2"});
    v.defines.push_back({"GLD", fuse_p ? "return g[i + p.g_off];" : "return 1.0;"});
  }
  if (fuse_c) g_last_variant += " +c";
  if (fuse_p) g_last_variant += pro == OpAttrs::Prologue::RmsNorm ? " +norm" : " +silu_mul";
  if (epi) g_last_variant += epi_f ? " +rope_append+freqs" : " +rope_append";
  const Pipeline* pipe = ctx.pipeline(v);

  MatmulParams base{};
  base.K = static_cast<uint32_t>(K);
  base.a_ms = static_cast<uint32_t>(A.rs), base.a_ks = static_cast<uint32_t>(A.cs);
  base.b_ks = static_cast<uint32_t>(B.rs), base.b_ns = static_cast<uint32_t>(B.cs);
  base.o_rs = static_cast<uint32_t>(N), base.o_bs = static_cast<uint32_t>(M * N);
  base.bd1 = static_cast<uint32_t>(dev[1].size), base.bd2 = static_cast<uint32_t>(dev[2].size);
  base.a_bs0 = static_cast<uint32_t>(dev[0].sa), base.a_bs1 = static_cast<uint32_t>(dev[1].sa);
  base.a_bs2 = static_cast<uint32_t>(dev[2].sa);
  base.b_bs0 = static_cast<uint32_t>(dev[0].sb), base.b_bs1 = static_cast<uint32_t>(dev[1].sb);
  base.b_bs2 = static_cast<uint32_t>(dev[2].sb);

  const uint64_t max_groups = ctx.limits().max_compute_workgroups_per_dimension;
  const uint64_t m_chunk = (M <= kGemvMaxM && gemv_on) ? M : max_groups * row_tile;
  const uint64_t n_chunk = max_groups * col_tile;
  std::vector<Arg> args = {ctx.arg(A.t), ctx.arg(B.t), ctx.arg(out, false)};
  if (fuse_c) args.push_back(ctx.arg(call.inputs[2]));
  base.c_off = fuse_c ? static_cast<uint32_t>(call.inputs[2].offset()) : 0;
  if (fuse_p && pro == OpAttrs::Prologue::RmsNorm) {
    const Tensor gd = ctx.dense(*pro_t);
    args.push_back(ctx.arg(gd));
    base.g_off = static_cast<uint32_t>(gd.offset());
    const float eps = static_cast<float>(call.attrs.eps);
    std::memcpy(&base.eps_bits, &eps, sizeof eps);
  } else if (fuse_p) {
    // up[i] for A index i sits at i + (up's offset - A's offset) (mod 2^32: the shader's u32
    // arithmetic wraps, so a negative delta works too).
    args.push_back(ctx.arg(*pro_t));
    base.g_off = static_cast<uint32_t>(pro_t->offset() - A.t.offset());
  }
  Tensor freqs;  // kept alive until the dispatches are recorded
  if (epi) {
    const Tensor &kc = call.inputs[2], &vc_t = call.inputs[3];
    args.push_back(ctx.arg(kc, false));
    args.push_back(ctx.arg(vc_t, false));
    if (epi_f) {
      freqs = ctx.dense(call.inputs[4]);
      args.push_back(ctx.arg(freqs));
      base.r_f_off = static_cast<uint32_t>(freqs.offset());
    }
    base.r_pos = static_cast<uint32_t>(call.attrs.pos_offset);
    base.r_hd = static_cast<uint32_t>(kc.size(2));
    base.r_kvn = static_cast<uint32_t>(kc.size(1) * kc.size(2));
    base.r_qn = static_cast<uint32_t>(N) - 2 * base.r_kvn;
    base.r_nrot = static_cast<uint32_t>(call.attrs.n_rot);
    base.r_base_log2 = static_cast<float>(std::log2(call.attrs.scalar0));  // as launch_kv_append_rope
    base.r_freq_scale = static_cast<float>(call.attrs.scalar1);
  }

  std::vector<int64_t> idx(host_dims, 0);
  for (uint64_t h = 0; h < host_batch; ++h) {
    int64_t a_off = A.t.offset(), b_off = B.t.offset(), o_off = out.offset();
    for (size_t d = 0; d < host_dims; ++d)
      a_off += idx[d] * dims[d].sa, b_off += idx[d] * dims[d].sb, o_off += idx[d] * dims[d].so;
    for (uint64_t z0 = 0; z0 < dev_batch; z0 += max_groups) {
      for (uint64_t m0 = 0; m0 < M; m0 += m_chunk) {
        for (uint64_t n0 = 0; n0 < N; n0 += n_chunk) {
          MatmulParams p = base;
          p.batch_base = static_cast<uint32_t>(z0);
          p.M = static_cast<uint32_t>(std::min(m_chunk, M - m0));
          p.N = static_cast<uint32_t>(std::min(n_chunk, N - n0));
          p.a_off = static_cast<uint32_t>(a_off + static_cast<int64_t>(m0) * A.rs);
          p.b_off = static_cast<uint32_t>(b_off + static_cast<int64_t>(n0) * B.cs);
          p.o_off = static_cast<uint32_t>(o_off + static_cast<int64_t>(m0 * N + n0));
          Dispatch d;
          d.pipeline = pipe;
          d.args = args;
          d.params = &p;
          d.params_size = sizeof p;
          d.groups_x = ceil_div(p.N, col_tile);
          d.groups_y = gemv_on ? 1 : ceil_div(p.M, row_tile);
          d.groups_z = static_cast<uint32_t>(std::min(max_groups, dev_batch - z0));
          ctx.dispatch(d);  // records (and copies) the params; no host wait
        }
      }
    }
    for (int d = static_cast<int>(host_dims) - 1; d >= 0; --d) {  // odometer over host dims
      if (++idx[d] < dims[d].size) break;
      idx[d] = 0;
    }
  }
  if (has_c && !fuse_c) {
    // out += c elementwise, in place (each element read and written by one invocation).
    OpCall add{OpKind::Binary, "add", {out, call.inputs[2]}, {out}, {}};
    add.attrs.binary = BinaryOp::Add;
    ctx.run_op(add);
  }
}

}  // namespace

void register_matmul_kernels(KernelRegistry& r) { r.add(OpKind::MatMul, check_matmul, launch_matmul); }

}  // namespace wgt::webgpu
