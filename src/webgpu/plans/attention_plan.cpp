// plan_attention: the capability rules of the attention kernels, the choice between prefill and
// the decode kernels, the decode kernels' shapes and the key split.
#include "webgpu/plans/attention_plan.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "webgpu/plans/matmul_plan.hpp"

namespace wgt::webgpu {
namespace {

using P = Planned<AttnPlan>;

constexpr int64_t kDecodeTargetGroups = 256;
// The subgroup decode kernel's defaults. Unroll 4 (keys per lane group per loop trip) and 4
// warps: the fastest on the H200 (BENCHMARKS.md, the attention decode runs).
constexpr int64_t kDecodeSgWarps = 4, kDecodeSgUnroll = 4;
// Workgroups the default chunk aims at: about two per SM of a large GPU (an H200 has 132) so
// that enough loads are in flight, and not many more, since every workgroup pays a merge of
// its lane groups' states and writes one partial per head for the reduction pass.
constexpr int64_t kDecodeSgTargetGroups = 256;
// Most per-lane floats of q and acc (2 G D / L): with the K/V words of U keys also live, more
// would spill registers on NVIDIA (255 per invocation), and lavapipe's LLVM takes ~30 s to
// compile a 256-float variant.
constexpr int64_t kDecodeSgMaxRegs = 128;

const char* tf(bool v) { return v ? "true" : "false"; }

Support float_dtype(DType t, const char* what) {
  if (t != DType::F32 && t != DType::F16)
    return Support::no(std::string(what) + " dtype " + dtype_name(t) + " not supported (f32, f16)");
  return Support::yes();
}

// Workgroup bytes of the shaders' arrays (staged rows are padded to d + 1 words).
int64_t prefill_smem(int64_t d) { return 4 * ((kPrefillBQ + 2 * kPrefillBK) * (d + 1) + kPrefillBQ * kPrefillBK); }
int64_t decode_smem(int64_t d, int64_t g, int64_t t) { return 4 * (g * (d + 1) + g * d + 2 * t * (d + 1) + g * t + 3 * g); }

// Largest key tile of the staged decode kernel that fits the workgroup memory, 0 if none does.
int64_t decode_tile(const Caps& caps, int64_t d, int64_t g) {
  for (int64_t t : {32, 16, 8, 4})
    if (decode_smem(d, g, t) <= caps.limits.max_compute_workgroup_storage_size) return t;
  return 0;
}

struct AttnShape {
  int64_t lq, heads, d, lk, kv_heads, group;
};
AttnShape attn_shape(const OpCall& call) {
  const Tensor &q = call.inputs[0], &k = call.inputs[1];
  AttnShape s{q.shape()[0], q.shape()[1], q.shape()[2], k.shape()[0], k.shape()[1], 0};
  s.group = s.kv_heads ? s.heads / s.kv_heads : 0;
  return s;
}

struct DecodeSg {
  int64_t lanes = 0, wg = 0, unroll = 0;  // lanes == 0: the kernel does not apply
};

// Lanes per key and workgroup size of the subgroup kernel for this shape, or lanes 0. A lane
// reads whole vec4<u32> words of each K/V row (D a multiple of 8 L for f16, 4 L for f32); the
// L lanes of a key must share a subgroup and the workgroup must hold whole subgroups. Among
// the lane counts that fit, the smallest (fewest shuffles per key) whose registers stay under
// kDecodeSgMaxRegs.
DecodeSg decode_sg_config(const Caps& caps, const AttentionTuning& tu, const AttnShape& s, DType kv) {
  DecodeSg c;
  if (tu.decode_split || !caps.features.subgroups) return c;
  const int64_t sg_min = caps.limits.subgroup_min_size, sg_max = caps.limits.subgroup_max_size;
  c.wg = 32 * static_cast<int64_t>(tu.warps.value_or(kDecodeSgWarps));
  if (sg_min < 4 || sg_max == 0 || c.wg % sg_max != 0 || c.wg > caps.limits.max_compute_invocations_per_workgroup)
    return c;
  const int64_t epv = kv == DType::F16 ? 8 : 4;
  auto fits = [&](int64_t l) { return l <= sg_min && l <= c.wg && s.d % (l * epv) == 0; };
  auto fits_regs = [&](int64_t l) { return fits(l) && 2 * s.group * s.d / l <= kDecodeSgMaxRegs; };
  if (tu.lanes) {
    if (fits_regs(*tu.lanes)) c.lanes = *tu.lanes;
  } else {
    for (int64_t l : {32, 16, 8, 4})
      if (fits_regs(l)) c.lanes = l;  // the smallest that fits: fewest shuffles per key
  }
  c.unroll = tu.unroll.value_or(kDecodeSgUnroll);
  const int64_t smem = 4 * (c.wg / std::max<int64_t>(sg_min, 1) * s.group + s.group * s.d + s.group);
  if (smem > caps.limits.max_compute_workgroup_storage_size) c.lanes = 0;
  return c;
}

// Keys per workgroup of the subgroup kernel: enough splits of the keys for about
// kDecodeSgTargetGroups workgroups over (splits, kv heads, queries), the tuning's chunk to
// override; a whole number of loop trips (WG / L * U keys), and few enough splits for the grid.
int64_t decode_sg_chunk(const Caps& caps, const AttentionTuning& tu, const AttnShape& s, const DecodeSg& c) {
  const int64_t trip = c.wg / c.lanes * c.unroll;
  int64_t chunk = tu.chunk.value_or(0);
  if (chunk == 0) {
    const int64_t splits = std::max<int64_t>(1, kDecodeSgTargetGroups / std::max<int64_t>(1, s.kv_heads * s.lq));
    chunk = (s.lk + splits - 1) / splits;
  }
  chunk = std::max(trip, (chunk + trip - 1) / trip * trip);
  const int64_t max_groups = caps.limits.max_compute_workgroups_per_dimension;
  while ((s.lk + chunk - 1) / chunk > max_groups) chunk *= 2;
  return chunk;
}

// Workgroup bytes of attention_prefill_sg.wgsl: the K and V tiles [bkv][d + 8] f16, and per
// subgroup an f32 scratch [sm][bkv + 4] and a P scratch [sm][bkv + 8] f16, and four flag words.
int64_t prefill_sg_smem(int64_t d, int64_t sm, int64_t nsg, int64_t bkv) {
  return 2 * bkv * (d + 8) * 2 + nsg * sm * ((bkv + 4) * 4 + (bkv + 8) * 2) + 16;
}

// Empty when `nsg` subgroups and `bkv`-key tiles run this shape on this adapter, else why not.
std::string prefill_sg_problem(const Caps& caps, const SgMatShape& f, int64_t d, int64_t nsg, int64_t bkv,
                               int64_t lpr) {
  if (lpr != 1 && lpr != f.subgroup / f.m)
    return "the lanes per score row must be 1 or " + std::to_string(f.subgroup / f.m);
  if (nsg < 1 || nsg > 16 || (nsg & (nsg - 1)) != 0) return "the subgroups must be 1, 2, 4, 8 or 16";
  if (nsg * f.subgroup > caps.limits.max_compute_invocations_per_workgroup ||
      nsg * f.subgroup > caps.limits.max_compute_workgroup_size_x)
    return std::to_string(nsg * f.subgroup) + " invocations exceed the device limit";
  if (bkv < 1 || bkv > 256 || bkv % f.n || bkv % f.k || bkv % lpr)
    return "the keys per tile must be a multiple of " + std::to_string(std::max<int64_t>({f.n, f.k, lpr})) +
           " up to 256";
  // The Q fragments are staged through the K/V tiles, one fragment column at a time.
  if (nsg * f.m * (f.k + 8) > 2 * bkv * (d + 8)) return "the K/V tiles are too small to stage Q through";
  const int64_t smem = prefill_sg_smem(d, f.m, nsg, bkv);
  if (smem > caps.limits.max_compute_workgroup_storage_size)
    return "needs " + std::to_string(smem) + " bytes of workgroup memory, the adapter allows " +
           std::to_string(caps.limits.max_compute_workgroup_storage_size);
  return {};
}

// Fills the PrefillSg fields of `sh` and returns true where the subgroup-matrix prefill kernel
// runs this call: f16 q / k / v / output on the adapter's f16 subgroup matrices (a fixed
// subgroup size that is a multiple of the fragment's rows), no general mask, a head dim of 4 to
// 16 fragments each way (in steps of 4: the shader's named fragments), and a tile that fits the
// workgroup memory: the tuning's, else 8 subgroups with 32 keys, or 16 keys where 32 do not fit.
// Throws InvalidArgument for a tuned tile that does not fit.
bool prefill_sg_config(const Caps& caps, const AttentionTuning& tu, const OpCall& call, const AttnShape& s,
                       AttnShader& sh) {
  if (tu.prefill_scalar || call.attrs.has_mask || !caps.features.shader_f16 || !caps.features.subgroups) return false;
  for (const Tensor& t : {call.inputs[0], call.inputs[1], call.inputs[2]})
    if (t.dtype() != DType::F16) return false;
  const std::optional<SgMatShape> f = sgmat_shape(caps);
  if (!f || f->subgroup % f->m != 0) return false;
  const int64_t lpr = f->subgroup / f->m;  // lanes per scratch row: a power of two dividing SN
  if ((lpr & (lpr - 1)) != 0 || f->n % lpr != 0) return false;
  const int64_t nqf = s.d / f->k, nof = s.d / f->n;
  if (s.d % (4 * f->k) != 0 || s.d % (4 * f->n) != 0 || nqf > 16 || nof > 16) return false;
  if (s.group == 0 || s.heads % s.kv_heads != 0) return false;
  int64_t nsg = kPrefillSgSubgroups, bkv = 0, lanes = lpr;
  if (tu.prefill_sg) {
    nsg = (*tu.prefill_sg)[0];
    bkv = (*tu.prefill_sg)[1];
    if ((*tu.prefill_sg)[2] != 0) lanes = (*tu.prefill_sg)[2];
    if (std::string why = prefill_sg_problem(caps, *f, s.d, nsg, bkv, lanes); !why.empty())
      throw_error(ErrorKind::InvalidArgument, "attention",
                  "WGT_ATTN_PREFILL_SG=" + std::to_string(nsg) + "x" + std::to_string(bkv) +
                      ((*tu.prefill_sg)[2] != 0 ? "x" + std::to_string(lanes) : std::string()) + ": " + why);
  } else {
    for (int64_t b : {kPrefillSgKeys, kPrefillSgKeys / 2})
      if (prefill_sg_problem(caps, *f, s.d, nsg, b, lanes).empty()) {
        bkv = b;
        break;
      }
    if (bkv == 0) return false;
  }
  const int64_t hpw = std::gcd(s.group, nsg);
  const int64_t rows = nsg / hpw * f->m;
  if ((s.lq + rows - 1) / rows > caps.limits.max_compute_workgroups_per_dimension ||
      s.heads / hpw > caps.limits.max_compute_workgroups_per_dimension)
    return false;
  sh.kernel = AttnKernel::PrefillSg;
  sh.sm = static_cast<uint8_t>(f->m);
  sh.sn = static_cast<uint8_t>(f->n);
  sh.sk = static_cast<uint8_t>(f->k);
  sh.sgs = static_cast<uint8_t>(f->subgroup);
  sh.nsg = static_cast<uint16_t>(nsg);
  sh.hpw = static_cast<uint16_t>(hpw);
  sh.bkv = static_cast<uint16_t>(bkv);
  sh.lpr = static_cast<uint16_t>(lanes);
  sh.debug_s = tu.prefill_sg_debug;
  sh.group = static_cast<uint16_t>(s.group);
  return true;
}

}  // namespace

Planned<AttnPlan> plan_attention(const Caps& caps, const AttentionTuning& tu, const OpCall& call) {
  if (call.inputs.size() != (call.attrs.has_mask ? 4u : 3u)) return P::no("attention takes {q, k, v[, mask]}");
  if (Support s = float_dtype(call.inputs[0].dtype(), "q"); !s.ok) return P::no(s.reason);
  if (Support s = float_dtype(call.inputs[1].dtype(), "k/v"); !s.ok) return P::no(s.reason);
  if (call.inputs[2].dtype() != call.inputs[1].dtype()) return P::no("k and v differ in dtype");
  if (!call.outputs.empty() && call.outputs[0].dtype() != call.inputs[0].dtype())
    return P::no("output dtype differs from q");
  if (call.attrs.has_mask)
    if (Support s = float_dtype(call.inputs[3].dtype(), "mask"); !s.ok) return P::no(s.reason);
  const AttnShape s = attn_shape(call);
  P p;
  AttnPlan& plan = p.plan;
  if (s.d == 0 || s.heads == 0) {  // nothing to compute; the launcher writes nothing
    plan.empty = true;
    return p;
  }
  const DType kv = call.inputs[1].dtype();
  const DecodeSg sg = decode_sg_config(caps, tu, s, kv);
  const int64_t tile = decode_tile(caps, s.d, s.group);
  const bool decode = s.lq <= kDecodeMaxQueries && (tile > 0 || sg.lanes > 0);
  const int64_t smem_limit = caps.limits.max_compute_workgroup_storage_size;
  for (const auto* list : {&call.inputs, &call.outputs})
    for (const Tensor& t : *list)
      if (t.defined() && t.storage()->nbytes() / dtype_size(t.dtype()) >= (uint64_t{1} << 31))
        return P::no("more than 2^31 elements in one buffer");
  if (!decode && prefill_sg_config(caps, tu, call, s, plan.shader)) {
    plan.shader.q_f16 = plan.shader.k_f16 = 1;
    plan.shader.d = static_cast<uint16_t>(s.d);
    plan.o_f16 = 1;
    return p;
  }
  if (!decode && prefill_smem(s.d) > smem_limit)
    return P::no("head_dim " + std::to_string(s.d) + " needs " + std::to_string(prefill_smem(s.d)) +
                 " bytes of workgroup memory, the adapter allows " + std::to_string(smem_limit));
  if (s.heads > caps.limits.max_compute_workgroups_per_dimension ||
      (s.lq + kPrefillBQ - 1) / kPrefillBQ > caps.limits.max_compute_workgroups_per_dimension)
    return P::no("too many heads or queries for one dispatch grid");

  AttnShader& sh = plan.shader;
  sh.q_f16 = call.inputs[0].dtype() == DType::F16;
  sh.k_f16 = kv == DType::F16;
  sh.m_f16 = call.attrs.has_mask && call.inputs[3].dtype() == DType::F16;
  sh.d = static_cast<uint16_t>(s.d);
  plan.o_f16 = sh.q_f16;  // the output has q's dtype
  if (!decode) {
    sh.kernel = AttnKernel::Prefill;
    return p;
  }
  sh.group = static_cast<uint16_t>(s.group);
  int64_t n_split = 0, chunk = 0;
  if (sg.lanes > 0) {
    sh.kernel = AttnKernel::DecodeSg;
    sh.lanes = static_cast<uint16_t>(sg.lanes);
    sh.wg = static_cast<uint16_t>(sg.wg);
    sh.unroll = static_cast<uint16_t>(sg.unroll);
    sh.sg_min = static_cast<uint16_t>(caps.limits.subgroup_min_size);
    chunk = decode_sg_chunk(caps, tu, s, sg);
    n_split = std::max<int64_t>(1, (s.lk + chunk - 1) / chunk);
    // One split: its state is the whole row's, so the kernel normalizes and stores O itself
    // (the reduction pass would multiply by 1 and add zeros: the same values).
    sh.direct = tu.decode_direct && n_split == 1;
  } else {
    // Enough splits of the keys to give the GPU ~kDecodeTargetGroups workgroups.
    sh.kernel = AttnKernel::DecodeStaged;
    sh.tile = static_cast<uint16_t>(tile);
    const int64_t max_split = std::max<int64_t>(1, (s.lk + tile - 1) / tile);
    n_split = std::clamp<int64_t>(kDecodeTargetGroups / (s.kv_heads * s.lq), 1, max_split);
    chunk = (s.lk + n_split - 1) / n_split;
    chunk = std::max<int64_t>(tile, (chunk + tile - 1) / tile * tile);
    n_split = std::max<int64_t>(1, (s.lk + chunk - 1) / chunk);
  }
  plan.n_split = static_cast<uint32_t>(n_split);
  plan.chunk = static_cast<uint32_t>(chunk);
  return p;
}

PipelineKey AttnPlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant AttnPlan::variant() const {
  const AttnShader& s = shader;
  ShaderVariant v;
  v.defines = {{"Q_F16", tf(s.q_f16)}, {"K_F16", tf(s.k_f16)}, {"M_F16", tf(s.m_f16)}, {"D", std::to_string(s.d)}};
  switch (s.kernel) {
    case AttnKernel::Prefill:
      v.shader = "attention_prefill";
      v.defines.push_back({"DPT", std::to_string((s.d + kPrefillTPR - 1) / kPrefillTPR)});
      break;
    case AttnKernel::PrefillSg:
      v.shader = "attention_prefill_sg";
      v.defines = {{"D", std::to_string(s.d)},
                   {"SM", std::to_string(s.sm)},
                   {"SN", std::to_string(s.sn)},
                   {"SK", std::to_string(s.sk)},
                   {"SGS", std::to_string(s.sgs)},
                   {"HPW", std::to_string(s.hpw)},
                   {"NSG", std::to_string(s.nsg)},
                   {"BKV", std::to_string(s.bkv)},
                   {"LPR", std::to_string(s.lpr)},
                   {"DEBUG_S", std::to_string(s.debug_s)},
                   {"NQF", std::to_string(s.d / s.sk)},
                   {"NOF", std::to_string(s.d / s.sn)}};
      break;
    case AttnKernel::DecodeSg:
      v.shader = "attention_decode_sg";
      v.defines.insert(v.defines.end(), {{"G", std::to_string(s.group)}, {"L", std::to_string(s.lanes)},
                                         {"WG", std::to_string(s.wg)}, {"U", std::to_string(s.unroll)},
                                         {"SG_MIN", std::to_string(s.sg_min)}, {"DIRECT", std::to_string(s.direct)},
                                         {"O_F16", tf(s.q_f16)}});
      break;
    case AttnKernel::DecodeStaged:
      v.shader = "attention_decode";
      v.defines.insert(v.defines.end(), {{"G", std::to_string(s.group)}, {"T", std::to_string(s.tile)}});
      break;
  }
  return v;
}

namespace {
struct ReduceFields {
  uint8_t o_f16;
  uint8_t pad = 0;
  uint16_t d;
};
}  // namespace

PipelineKey AttnPlan::reduce_key() const {
  static const char family = 0;
  return make_key(&family, ReduceFields{o_f16, 0, shader.d});
}

ShaderVariant AttnPlan::reduce_variant() const {
  return {"attention_decode_reduce", {{"O_F16", tf(o_f16)}, {"D", std::to_string(shader.d)}}};
}

}  // namespace wgt::webgpu
