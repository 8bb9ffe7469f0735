// The attention family's plan (OpKind::Attention): for prefill the flash-attention kernel on
// subgroup matrices (attention_prefill_sg.wgsl) where it applies, else the scalar flash-style
// kernel (attention_prefill.wgsl); for decode (at most kDecodeMaxQueries queries) a split-KV pass 1,
// the subgroup kernel (attention_decode_sg.wgsl) where it applies or the staged one
// (attention_decode.wgsl), and the reduction pass (attention_decode_reduce.wgsl), with the
// key split. plan_attention is pure (no Dawn call); kernels/nn.cpp encodes the plan.
#pragma once
#include <cstdint>

#include "webgpu/plans/plan.hpp"
#include "webgpu/plans/tuning.hpp"

namespace wgt::webgpu {

enum class AttnKernel : uint8_t { Prefill, PrefillSg, DecodeStaged, DecodeSg };

// The fields that select the (first) shader: the pipeline key is their bytes (no padding).
struct AttnShader {
  AttnKernel kernel = AttnKernel::Prefill;
  uint8_t q_f16 = 0, k_f16 = 0, m_f16 = 0;  // q, k / v, mask packed f16
  uint16_t d = 0;                           // head dim
  uint16_t group = 0;                       // decode: query heads per KV head
  uint16_t lanes = 0, wg = 0, unroll = 0;   // DecodeSg: invocations per key, workgroup, keys per trip
  uint16_t sg_min = 0;                      // DecodeSg: the adapter's smallest subgroup
  uint16_t tile = 0;                        // DecodeStaged: keys staged per tile
  uint8_t sm = 0, sn = 0, sk = 0, sgs = 0;  // PrefillSg: fragment shape, the adapter's subgroup size
  uint16_t nsg = 0, hpw = 0, bkv = 0;       // PrefillSg: subgroups, query heads per workgroup, keys per tile
  uint16_t lpr = 0;                         // PrefillSg: lanes per score row (1 or sgs / sm)
  uint16_t debug_s = 0;                     // PrefillSg: diagnosis mode (AttentionTuning::prefill_sg_debug)
  uint16_t direct = 0;                      // DecodeSg with one key split: stores O, no reduction pass
};

struct AttnPlan {
  AttnShader shader;
  uint8_t o_f16 = 0;        // decode: the reduction pass writes packed f16
  uint32_t n_split = 0;     // decode: key splits (workgroups along x of pass 1; 1 with shader.direct)
  uint32_t chunk = 0;       // decode: keys per split
  bool empty = false;       // nothing to compute (no heads or head dim 0)
  PipelineKey key() const;  // prefill or decode pass 1
  ShaderVariant variant() const;
  PipelineKey reduce_key() const;  // decode pass 2
  ShaderVariant reduce_variant() const;
};

Planned<AttnPlan> plan_attention(const Caps& caps, const AttentionTuning& tuning, const OpCall& call);

constexpr int64_t kPrefillBQ = 16, kPrefillBK = 16, kPrefillTPR = 8;
// The subgroup-matrix prefill kernel's default subgroups per workgroup and keys per tile
// (WGT_ATTN_PREFILL_SG overrides both); the workgroup's query rows per head are
// (subgroups / heads per workgroup) fragments of SM rows.
constexpr int64_t kPrefillSgSubgroups = 8, kPrefillSgKeys = 32;
// Query rows per workgroup (per head) of a PrefillSg plan: the launcher's grid.
inline int64_t prefill_sg_rows(const AttnShader& s) { return s.nsg / s.hpw * s.sm; }
constexpr int64_t kDecodeMaxQueries = 4;  // above this the prefill kernel reads K/V fewer times

}  // namespace wgt::webgpu
