// Kernel choice of the elementwise, reduce, transformer-op and attention plans
// (src/webgpu/plans/): which kernel plan_*() picks for given adapter capabilities, tuning and
// calls, their rejects, that the pipeline key follows exactly the shader-selecting fields, and
// that every variant preprocesses into WGSL without a directive or placeholder left (the op
// expressions and subgroup / f16 forms now come from the .wgsl through #if). No GPU needed.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>

#include "webgpu/plans/attention_plan.hpp"
#include "webgpu/plans/elementwise_plan.hpp"
#include "webgpu/plans/index_plan.hpp"
#include "webgpu/plans/nn_plan.hpp"
#include "plan_test_support.hpp"
#include "webgpu/plans/reduce_plan.hpp"
#include "webgpu/shader_registry.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using namespace wgt::webgpu;

namespace {

using test::Adapter;
using test::big_gpu;
const auto defaults = test::webgpu_defaults;

Tensor t(const Shape& s, DType d = DType::F32) { return Tensor::empty(s, d); }

OpCall call(OpKind k, std::vector<Tensor> ins, const Shape& out, DType od = DType::F32) {
  OpCall c{k, "op", std::move(ins), {t(out, od)}, {}};
  return c;
}

using test::expect_variant_expands;

template <class P>
P ok(const Planned<P>& p) {
  EXPECT_TRUE(p.ok()) << p.reject;
  return p.plan;
}

}  // namespace

// ---- elementwise ----

TEST(ElementwisePlan, Vec4OnlyForContiguousAlignedF32) {
  const Adapter ad = defaults();
  OpCall add = call(OpKind::Binary, {t({8, 16}), t({8, 16})}, {8, 16});
  add.attrs.binary = BinaryOp::Add;
  EXPECT_EQ(ok(plan_elementwise(ad.caps(), add)).shader.kernel, EwKernel::BinaryVec4);
  // A transposed operand, an odd count, an i32 operand or a comparison: the word kernel.
  OpCall strided = add;
  strided.inputs[1] = t({16, 8}).t();
  EXPECT_EQ(ok(plan_elementwise(ad.caps(), strided)).shader.kernel, EwKernel::Binary);
  OpCall odd = call(OpKind::Binary, {t({3, 5}), t({3, 5})}, {3, 5});
  EXPECT_EQ(ok(plan_elementwise(ad.caps(), odd)).shader.kernel, EwKernel::Binary);
  OpCall cmp = add;
  cmp.attrs.binary = BinaryOp::Lt;
  cmp.outputs = {t({8, 16}, DType::Bool)};
  EXPECT_EQ(ok(plan_elementwise(ad.caps(), cmp)).shader.kernel, EwKernel::Binary);
  OpCall ex = call(OpKind::Unary, {t({64})}, {64});
  ex.attrs.unary = UnaryOp::Exp;
  const EwPlan u = ok(plan_elementwise(ad.caps(), ex));
  EXPECT_EQ(u.shader.kernel, EwKernel::UnaryVec4);
  EXPECT_EQ(u.shader.op, static_cast<uint8_t>(UnaryOp::Exp));
  OpCall cast = call(OpKind::Cast, {t({64})}, {64}, DType::F16);
  const EwPlan c = ok(plan_elementwise(ad.caps(), cast));
  EXPECT_EQ(c.shader.kernel, EwKernel::Unary);
  EXPECT_EQ(c.shader.op, kEwIdentity);
}

TEST(ElementwisePlan, IntegerOpsWithoutAnI32FormAreRejected) {
  const Adapter ad = defaults();
  OpCall div = call(OpKind::Binary, {t({4}, DType::I32), t({4}, DType::I32)}, {4}, DType::I32);
  div.attrs.binary = BinaryOp::Div;
  Planned<EwPlan> p = plan_elementwise(ad.caps(), div);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.reject.find("integer"), std::string::npos) << p.reject;
  OpCall ex = call(OpKind::Unary, {t({4}, DType::I32)}, {4}, DType::I32);
  ex.attrs.unary = UnaryOp::Exp;
  EXPECT_FALSE(plan_elementwise(ad.caps(), ex).ok());
  ex.attrs.unary = UnaryOp::Abs;
  const EwPlan abs = ok(plan_elementwise(ad.caps(), ex));
  EXPECT_TRUE(abs.shader.ct_i32);
  OpCall rn = call(OpKind::RandNormal, {}, {4}, DType::I32);
  EXPECT_FALSE(plan_elementwise(ad.caps(), rn).ok());
  OpCall i64 = call(OpKind::Unary, {t({4}, DType::I64)}, {4}, DType::I64);
  EXPECT_FALSE(plan_elementwise(ad.caps(), i64).ok());
}

// Every unary and binary op, in each compute type it has, expands to WGSL; different ops and
// compute types are different pipeline keys, equal calls the same.
TEST(ElementwisePlan, EveryOpVariantExpandsWithItsOwnKey) {
  const Adapter ad = defaults();
  std::set<decltype(PipelineKey::w)> keys;
  size_t plans = 0;
  for (DType dt : {DType::F32, DType::F16, DType::I32}) {
    for (int op = 0; op <= static_cast<int>(UnaryOp::Silu); ++op) {
      OpCall u = call(OpKind::Unary, {t({3, 5}, dt)}, {3, 5}, dt);
      u.attrs.unary = static_cast<UnaryOp>(op);
      Planned<EwPlan> p = plan_elementwise(ad.caps(), u);
      if (!p.ok()) continue;
      expect_variant_expands(p.plan.variant(), std::string("unary ") + unary_op_name(u.attrs.unary));
      keys.insert(p.plan.key().w);
      ++plans;
      EXPECT_TRUE(p.plan.key() == ok(plan_elementwise(ad.caps(), u)).key());
    }
    for (int op = 0; op <= static_cast<int>(BinaryOp::Ge); ++op) {
      OpCall b = call(OpKind::Binary, {t({3, 5}, dt), t({5}, dt)}, {3, 5}, dt);
      b.attrs.binary = static_cast<BinaryOp>(op);
      Planned<EwPlan> p = plan_elementwise(ad.caps(), b);
      if (!p.ok()) continue;
      expect_variant_expands(p.plan.variant(), std::string("binary ") + binary_op_name(b.attrs.binary));
      keys.insert(p.plan.key().w);
      ++plans;
    }
  }
  EXPECT_EQ(keys.size(), plans);
  for (int op = 0; op < 4; ++op) {  // the vec4 kernel's ops
    OpCall b = call(OpKind::Binary, {t({16}), t({16})}, {16});
    b.attrs.binary = static_cast<BinaryOp>(op);
    expect_variant_expands(ok(plan_elementwise(ad.caps(), b)).variant(), "binary_vec4");
  }
  for (OpKind k : {OpKind::Fill, OpKind::Arange})
    for (DType dt : {DType::F32, DType::I32, DType::U8})
      expect_variant_expands(ok(plan_elementwise(ad.caps(), call(k, {}, {7}, dt))).variant(), "fill/arange");
}

// ---- reduce ----

TEST(ReducePlan, RowKernelsAndSubgroupsFollowCapsAndTuning) {
  const Adapter gpu = big_gpu(), plain = defaults();
  OpCall sm = call(OpKind::Softmax, {t({6, 256})}, {6, 256});
  sm.attrs.axis = 1;
  const ReducePlan fast = ok(plan_reduce(gpu.caps(), {}, sm));
  EXPECT_EQ(fast.shader.kernel, ReduceKernel::SoftmaxRowV4);
  EXPECT_TRUE(fast.shader.sg);
  EXPECT_EQ(fast.groups, 6u);
  // The tuning turns the subgroup reduction off; an adapter without subgroups never has it.
  const ReducePlan tree = ok(plan_reduce(gpu.caps(), ReduceTuning{false}, sm));
  EXPECT_EQ(tree.shader.kernel, ReduceKernel::SoftmaxRowV4);
  EXPECT_FALSE(tree.shader.sg);
  EXPECT_FALSE(fast.key() == tree.key());
  EXPECT_FALSE(ok(plan_reduce(plain.caps(), {}, sm)).shader.sg);
  // Softmax along a strided axis: the general kernel.
  OpCall col = call(OpKind::Softmax, {t({256, 6}).t()}, {6, 256});
  col.attrs.axis = 1;
  EXPECT_EQ(ok(plan_reduce(gpu.caps(), {}, col)).shader.kernel, ReduceKernel::Softmax);
  // Sum over the outer axis of a short, wide matrix: an invocation per output (256 per
  // workgroup); with few outputs a workgroup per output instead.
  OpCall s0 = call(OpKind::Reduce, {t({7, 4096})}, {4096});
  s0.attrs.axes = {0};
  const ReducePlan cols = ok(plan_reduce(gpu.caps(), {}, s0));
  EXPECT_EQ(cols.shader.kernel, ReduceKernel::Cols);
  EXPECT_EQ(cols.groups, 16u);
  OpCall few = call(OpKind::Reduce, {t({7, 9})}, {9});
  few.attrs.axes = {0};
  const ReducePlan rows = ok(plan_reduce(gpu.caps(), {}, few));
  EXPECT_EQ(rows.shader.kernel, ReduceKernel::Rows);
  EXPECT_EQ(rows.groups, 9u);
  OpCall s1 = call(OpKind::Reduce, {t({7, 4096})}, {7});
  s1.attrs.axes = {1};
  EXPECT_EQ(ok(plan_reduce(gpu.caps(), {}, s1)).shader.kernel, ReduceKernel::RowV4);
  s1.attrs.reduce = ReduceOp::Max;
  EXPECT_EQ(ok(plan_reduce(gpu.caps(), {}, s1)).shader.kernel, ReduceKernel::Rows);
}

TEST(ReducePlan, F16WithoutShaderF16RunsTheF32KernelBetweenCasts) {
  Adapter gpu = big_gpu();
  OpCall n = call(OpKind::RMSNorm, {t({3, 64}, DType::F16), t({64}, DType::F16)}, {3, 64}, DType::F16);
  n.attrs.has_weight = true;
  const ReducePlan native = ok(plan_reduce(gpu.caps(), {}, n));
  EXPECT_FALSE(native.f16_via_f32);
  EXPECT_TRUE(native.shader.f16);
  gpu.f.shader_f16 = false;
  const ReducePlan via = ok(plan_reduce(gpu.caps(), {}, n));
  EXPECT_TRUE(via.f16_via_f32);
  EXPECT_FALSE(via.shader.f16);
  EXPECT_EQ(via.shader.kernel, ReduceKernel::RmsNormRowV4);
  expect_variant_expands(native.variant(), "rmsnorm f16");
  expect_variant_expands(via.variant(), "rmsnorm via f32");
  OpCall bad = call(OpKind::Reduce, {t({4}, DType::I32)}, {}, DType::I32);
  EXPECT_FALSE(plan_reduce(gpu.caps(), {}, bad).ok());
}

TEST(ReducePlan, EveryKernelVariantExpands) {
  for (const Adapter& ad : {big_gpu(), defaults()}) {
    for (DType dt : {DType::F32, DType::F16}) {
      for (int64_t n : {5, 256, 5000}) {
        OpCall sm = call(OpKind::LogSoftmax, {t({3, n}, dt)}, {3, n}, dt);
        sm.attrs.axis = 1;
        OpCall ln = call(OpKind::LayerNorm, {t({3, n}, dt), t({n}, dt), t({n}, dt)}, {3, n}, dt);
        ln.attrs.has_weight = ln.attrs.has_bias = true;
        OpCall rd = call(OpKind::Reduce, {t({3, n}, dt)}, {3}, dt);
        rd.attrs.axes = {1};
        OpCall am = call(OpKind::Reduce, {t({3, n}, dt)}, {3}, DType::I64);
        am.attrs.axes = {1};
        am.attrs.reduce = ReduceOp::ArgMax;
        for (const OpCall* c : {&sm, &ln, &rd, &am}) expect_variant_expands(ok(plan_reduce(ad.caps(), {}, *c)).variant(), c->name);
      }
    }
  }
}

// ---- transformer ops ----

TEST(NnPlan, KvAppendPicksOneDispatchWhereRowsAreWholeWords) {
  const Adapter ad = defaults();
  const Tensor kc = t({8, 2, 4}, DType::F16), vc = t({8, 2, 4}, DType::F16);
  OpCall both{OpKind::KVAppend, "kv_append", {kc, t({1, 2, 4}), vc, t({1, 2, 4})}, {}, {}};
  both.attrs.pos_offset = 2;
  const NnPlan p2 = ok(plan_nn(ad.caps(), both));
  EXPECT_EQ(p2.route, NnRoute::Kernel);
  EXPECT_EQ(p2.shader.kernel, NnKernel::KvAppend2);
  EXPECT_TRUE(p2.shader.cache_f16);
  // An odd row size in f16: the caches' words are shared with the neighbouring rows.
  OpCall odd{OpKind::KVAppend, "kv_append", {t({8, 1, 3}, DType::F16), t({1, 1, 3}), t({8, 1, 3}, DType::F16), t({1, 1, 3})}, {}, {}};
  odd.attrs.pos_offset = 1;
  EXPECT_EQ(ok(plan_nn(ad.caps(), odd)).route, NnRoute::KvAppendEach);
  OpCall strided{OpKind::KVAppend, "kv_append", {t({8, 2, 4}).t(), t({1, 2, 4})}, {}, {}};
  EXPECT_FALSE(plan_nn(ad.caps(), strided).ok());
}

TEST(NnPlan, RopeAppendFusesUnlessTheStorageBuffersRunOut) {
  Adapter ad = defaults();
  const Tensor kc = t({8, 2, 4}), vc = t({8, 2, 4});
  OpCall c{OpKind::KVAppend, "kv_append_rope", {kc, t({1, 2, 4}), vc, t({1, 2, 4}), t({1, 4, 4})}, {}, {}};
  c.attrs.n_rot = 4;
  c.attrs.scalar0 = 10000.0;
  const NnPlan fused = ok(plan_nn(ad.caps(), c));
  EXPECT_EQ(fused.shader.kernel, NnKernel::KvAppendRope);
  EXPECT_FALSE(fused.shader.q_shared);
  expect_variant_expands(fused.variant(), "kv_append_rope three");
  ad.l.max_storage_buffers_per_shader_stage = 4;  // caches + k, v, q need five
  EXPECT_EQ(ok(plan_nn(ad.caps(), c)).route, NnRoute::KvAppendRopeUnfused);
  OpCall rope{OpKind::Rope, "rope_", {t({2, 3, 8}, DType::F16).slice(2, 1, 7)}, {}, {}};
  rope.attrs.n_rot = 4;
  Planned<NnPlan> r = plan_nn(ad.caps(), rope);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.reject.find("even"), std::string::npos) << r.reject;
  OpCall rope_out{OpKind::Rope, "rope", {t({2, 3, 8}), t({2}, DType::I32)}, {t({2, 3, 8})}, {}};
  rope_out.attrs.n_rot = 8;
  const NnPlan ro = ok(plan_nn(ad.caps(), rope_out));
  EXPECT_EQ(ro.shader.kernel, NnKernel::Rope);
  EXPECT_TRUE(ro.shader.has_pos);
  expect_variant_expands(ro.variant(), "rope");
}

// ---- attention ----

OpCall attn(int64_t lq, int64_t heads, int64_t d, int64_t lk, int64_t kv_heads, DType kv = DType::F32) {
  OpCall c{OpKind::Attention, "attention", {t({lq, heads, d}), t({lk, kv_heads, d}, kv), t({lk, kv_heads, d}, kv)},
           {t({lq, heads, d})}, {}};
  c.attrs.scalar0 = 0.125;
  return c;
}

TEST(AttentionPlan, DecodeKernelFollowsCapsAndTuning) {
  const Adapter gpu = big_gpu(), plain = defaults();
  const OpCall dec = attn(1, 8, 64, 1000, 2, DType::F16);
  const AttnPlan sg = ok(plan_attention(gpu.caps(), {}, dec));
  EXPECT_EQ(sg.shader.kernel, AttnKernel::DecodeSg);
  EXPECT_EQ(sg.shader.lanes, 4);  // the smallest lane count that fits: 2*G*D/L = 2*4*64/4 = 128 registers
  EXPECT_EQ(sg.shader.wg, 128);
  EXPECT_GE(sg.n_split, 1u);
  EXPECT_GE(uint64_t{sg.n_split} * sg.chunk, 1000u);
  AttentionTuning split;
  split.decode_split = true;
  const AttnPlan staged = ok(plan_attention(gpu.caps(), split, dec));
  EXPECT_EQ(staged.shader.kernel, AttnKernel::DecodeStaged);
  EXPECT_GT(staged.shader.tile, 0);
  EXPECT_EQ(ok(plan_attention(plain.caps(), {}, dec)).shader.kernel, AttnKernel::DecodeStaged);
  AttentionTuning lanes;
  lanes.lanes = 8;
  lanes.chunk = 512;
  const AttnPlan forced = ok(plan_attention(gpu.caps(), lanes, dec));
  EXPECT_EQ(forced.shader.lanes, 8);
  EXPECT_EQ(forced.shader.kernel, AttnKernel::DecodeSg);
  EXPECT_EQ(forced.chunk, 512u);
  EXPECT_FALSE(forced.key() == sg.key());
  // A lane count that does not divide the head dim into whole words: the staged kernel.
  lanes.lanes = 16;  // 64 f16 per row: 16 lanes x 8 per word would need 128
  EXPECT_EQ(ok(plan_attention(gpu.caps(), lanes, dec)).shader.kernel, AttnKernel::DecodeStaged);
  for (const AttnPlan* p : {&sg, &staged, &forced}) {
    expect_variant_expands(p->variant(), "decode pass 1");
    expect_variant_expands(p->reduce_variant(), "decode pass 2");
  }
  // One key split: the subgroup kernel stores O itself (its own variant), unless tuned off;
  // several splits, or the staged kernel, keep the reduction pass.
  EXPECT_GT(sg.n_split, 1u);
  EXPECT_EQ(sg.shader.direct, 0);
  EXPECT_EQ(staged.shader.direct, 0);
  const AttnPlan short_ctx = ok(plan_attention(gpu.caps(), {}, attn(1, 8, 64, 7, 2, DType::F16)));
  EXPECT_EQ(short_ctx.n_split, 1u);
  EXPECT_EQ(short_ctx.shader.direct, 1);
  expect_variant_expands(short_ctx.variant(), "decode, direct store");
  AttentionTuning whole;
  whole.chunk = 1024;  // one chunk covers the 1000 keys
  const AttnPlan one = ok(plan_attention(gpu.caps(), whole, dec));
  EXPECT_EQ(one.n_split, 1u);
  EXPECT_EQ(one.shader.direct, 1);
  EXPECT_FALSE(one.key() == sg.key());
  whole.decode_direct = false;
  const AttnPlan two_pass = ok(plan_attention(gpu.caps(), whole, dec));
  EXPECT_EQ(two_pass.n_split, 1u);
  EXPECT_EQ(two_pass.shader.direct, 0);
  EXPECT_FALSE(two_pass.key() == one.key());
  split.decode_direct = true;
  EXPECT_EQ(ok(plan_attention(gpu.caps(), split, attn(1, 8, 64, 7, 2, DType::F16))).shader.direct, 0);
  const AttnPlan pre = ok(plan_attention(gpu.caps(), {}, attn(9, 4, 32, 9, 4)));
  EXPECT_EQ(pre.shader.kernel, AttnKernel::Prefill);
  expect_variant_expands(pre.variant(), "prefill");
}

TEST(AttentionPlan, RejectsWhatNoKernelFits) {
  Adapter small = defaults();
  small.l.max_compute_workgroup_storage_size = 4096;
  Planned<AttnPlan> p = plan_attention(small.caps(), {}, attn(9, 4, 256, 9, 4));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.reject.find("workgroup memory"), std::string::npos) << p.reject;
  OpCall mixed = attn(1, 2, 8, 4, 2);
  mixed.inputs[2] = t({4, 2, 8}, DType::F16);
  EXPECT_FALSE(plan_attention(defaults().caps(), {}, mixed).ok());
  EXPECT_TRUE(ok(plan_attention(defaults().caps(), {}, attn(1, 0, 8, 4, 0))).empty);
}

// The subgroup-matrix prefill kernel: f16 operands, no general mask, fragment shapes of the
// H200 (16x16x16, subgroups of 32, 48 KiB) and of sid's lavapipe (8x8x8, subgroups of 8, 32 KiB).
OpCall attn_f16(int64_t lq, int64_t heads, int64_t d, int64_t lk, int64_t kv_heads) {
  const DType h = DType::F16;
  OpCall c{OpKind::Attention, "attention", {t({lq, heads, d}, h), t({lk, kv_heads, d}, h), t({lk, kv_heads, d}, h)},
           {t({lq, heads, d}, h)}, {}};
  c.attrs.scalar0 = 0.125;
  c.attrs.causal = true;
  return c;
}
Adapter with_matrices(Adapter a, uint32_t m, uint32_t n, uint32_t k, uint32_t sgs, uint64_t smem) {
  a.f.subgroup_matrix = true;
  a.f.subgroup_matrix_configs = {{2, 1, m, n, k}, {6, 4, 16, 16, 32}};
  a.l.subgroup_min_size = a.l.subgroup_max_size = static_cast<uint32_t>(sgs);
  a.l.max_compute_workgroup_storage_size = smem;
  return a;
}

TEST(AttentionPlan, PrefillOnSubgroupMatrices) {
  const Adapter h200 = with_matrices(big_gpu(), 16, 16, 16, 32, 49152);
  const AttnPlan p = ok(plan_attention(h200.caps(), {}, attn_f16(4096, 32, 128, 4096, 8)));
  EXPECT_EQ(p.shader.kernel, AttnKernel::PrefillSg);
  EXPECT_EQ(p.shader.sm * 10000 + p.shader.sn * 100 + p.shader.sk, 161616);
  EXPECT_EQ(p.shader.sgs, 32);
  EXPECT_EQ(p.shader.hpw, 4);  // the 4 query heads of a KV head share its tiles
  EXPECT_EQ(p.shader.bkv, 32);
  EXPECT_EQ(p.shader.lpr, 2);  // 32 lanes share the 16 score rows
  EXPECT_EQ(prefill_sg_rows(p.shader), 32);
  expect_variant_expands(p.variant(), "prefill sg 16x16x16");
  // Heads per workgroup: gcd(group, 8 subgroups); the rows per head fill the 8 subgroups.
  for (auto [heads, kv, hpw] : {std::array<int, 3>{8, 8, 1}, {6, 2, 1}, {16, 2, 8}, {32, 2, 8}, {12, 2, 2}}) {
    const AttnPlan g = ok(plan_attention(h200.caps(), {}, attn_f16(100, heads, 64, 100, kv)));
    EXPECT_EQ(g.shader.kernel, AttnKernel::PrefillSg) << heads << "/" << kv;
    EXPECT_EQ(g.shader.hpw, hpw) << heads << "/" << kv;
    EXPECT_EQ(prefill_sg_rows(g.shader), 8 / hpw * 16) << heads << "/" << kv;
  }
  // d 256: the 32-key tiles exceed 48 KiB, 16-key ones fit.
  EXPECT_EQ(ok(plan_attention(h200.caps(), {}, attn_f16(100, 8, 256, 100, 2))).shader.bkv, 16);
  // 16x8x16: twice as many output fragments along d.
  const Adapter narrow = with_matrices(big_gpu(), 16, 8, 16, 32, 49152);
  const AttnPlan pn = ok(plan_attention(narrow.caps(), {}, attn_f16(300, 8, 128, 300, 2)));
  EXPECT_EQ(pn.shader.kernel, AttnKernel::PrefillSg);
  EXPECT_EQ(pn.shader.sn, 8);
  expect_variant_expands(pn.variant(), "prefill sg 16x8x16");
  // lavapipe: 8x8x8 and d 128 still fit 32 KiB with 32-key tiles.
  const Adapter lvp = with_matrices(big_gpu(), 8, 8, 8, 8, 32768);
  const AttnPlan pl = ok(plan_attention(lvp.caps(), {}, attn_f16(200, 8, 128, 200, 2)));
  EXPECT_EQ(pl.shader.kernel, AttnKernel::PrefillSg);
  EXPECT_EQ(pl.shader.bkv, 32);
  EXPECT_EQ(prefill_sg_rows(pl.shader), 16);
  expect_variant_expands(pl.variant(), "prefill sg 8x8x8");
  EXPECT_FALSE(pl.key() == p.key());
  // A tuned tile (WGT_ATTN_PREFILL_SG): 4 subgroups of one head's rows each for GQA 4.
  AttentionTuning tu;
  tu.prefill_sg = {{4, 64, 0}};
  const AttnPlan pt = ok(plan_attention(h200.caps(), tu, attn_f16(100, 8, 64, 100, 2)));
  EXPECT_EQ(pt.shader.nsg, 4);
  EXPECT_EQ(pt.shader.bkv, 64);
  EXPECT_EQ(pt.shader.lpr, 2);
  EXPECT_EQ(prefill_sg_rows(pt.shader), 16);
  expect_variant_expands(pt.variant(), "prefill sg 4x64");
  // One lane per score row (8x32x1): its own pipeline.
  tu.prefill_sg = {{8, 32, 1}};
  const AttnPlan p1 = ok(plan_attention(h200.caps(), tu, attn_f16(4096, 32, 128, 4096, 8)));
  EXPECT_EQ(p1.shader.lpr, 1);
  EXPECT_FALSE(p1.key() == p.key());
  expect_variant_expands(p1.variant(), "prefill sg 8x32x1");
  // The diagnosis modes (first tile's intermediates): each its own pipeline, the same tile.
  EXPECT_EQ(p.shader.debug_s, 0);
  for (uint8_t mode = 1; mode <= 4; ++mode) {
    AttentionTuning dbg;
    dbg.prefill_sg_debug = mode;
    const AttnPlan pd = ok(plan_attention(h200.caps(), dbg, attn_f16(4096, 32, 128, 4096, 8)));
    EXPECT_EQ(pd.shader.debug_s, mode);
    EXPECT_EQ(pd.shader.bkv, p.shader.bkv);
    EXPECT_FALSE(pd.key() == p.key());
    expect_variant_expands(pd.variant(), "prefill sg debug mode " + std::to_string(mode));
  }
  // Tiles the adapter cannot run are typed errors naming the variable.
  for (std::array<uint32_t, 3> bad : {std::array<uint32_t, 3>{8, 64, 0}, {3, 32, 0}, {8, 24, 0}, {32, 32, 0},
                                      {8, 0, 0}, {8, 32, 4}, {8, 32, 3}}) {
    tu.prefill_sg = bad;
    try {
      (void)plan_attention(h200.caps(), tu, attn_f16(100, 8, 128, 100, 2));
      ADD_FAILURE() << bad[0] << "x" << bad[1] << "x" << bad[2] << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("WGT_ATTN_PREFILL_SG"), std::string::npos) << e.what();
    }
  }
}

TEST(AttentionPlan, PrefillStaysScalarWhereTheSgKernelDoesNotApply) {
  const Adapter h200 = with_matrices(big_gpu(), 16, 16, 16, 32, 49152);
  auto kernel = [](const Adapter& a, const OpCall& c, const AttentionTuning& tu = {}) {
    return ok(plan_attention(a.caps(), tu, c)).shader.kernel;
  };
  const OpCall base = attn_f16(100, 8, 128, 100, 2);
  ASSERT_EQ(kernel(h200, base), AttnKernel::PrefillSg);
  AttentionTuning scalar;
  scalar.prefill_scalar = true;  // WGT_ATTN_PREFILL=scalar
  EXPECT_EQ(kernel(h200, base, scalar), AttnKernel::Prefill);
  EXPECT_EQ(kernel(big_gpu(), base), AttnKernel::Prefill);  // no subgroup matrices
  Adapter no_f16 = h200;
  no_f16.f.shader_f16 = false;
  EXPECT_EQ(kernel(no_f16, base), AttnKernel::Prefill);
  Adapter varying = h200;  // the subgroup size is not fixed
  varying.l.subgroup_min_size = 16;
  EXPECT_EQ(kernel(varying, base), AttnKernel::Prefill);
  OpCall masked = base;
  masked.attrs.has_mask = true;
  masked.inputs.push_back(t({100, 100}, DType::F16));
  EXPECT_EQ(kernel(h200, masked), AttnKernel::Prefill);
  OpCall q32 = base;  // f32 queries (and output)
  q32.inputs[0] = t({100, 8, 128});
  q32.outputs[0] = t({100, 8, 128});
  EXPECT_EQ(kernel(h200, q32), AttnKernel::Prefill);
  OpCall kv32 = base;
  kv32.inputs[1] = t({100, 2, 128});
  kv32.inputs[2] = t({100, 2, 128});
  EXPECT_EQ(kernel(h200, kv32), AttnKernel::Prefill);
  // Head dims that are not 4 to 16 fragments in steps of 4: 96 (6 of 16), 512 (32 of 16).
  EXPECT_EQ(kernel(h200, attn_f16(100, 8, 96, 100, 2)), AttnKernel::Prefill);
  const Adapter roomy = with_matrices(big_gpu(), 16, 16, 16, 32, 131072);  // where the scalar kernel fits d 512
  EXPECT_EQ(kernel(roomy, attn_f16(100, 8, 512, 100, 2)), AttnKernel::Prefill);
  // Decode stays on the decode kernels.
  EXPECT_EQ(kernel(h200, attn_f16(kDecodeMaxQueries, 8, 128, 1000, 2)), AttnKernel::DecodeSg);
  EXPECT_EQ(kernel(h200, attn_f16(kDecodeMaxQueries + 1, 8, 128, 1000, 2)), AttnKernel::PrefillSg);
}

// ---- indexing ----

TEST(IndexPlan, ElementSizeAndIndexWidthSelectTheShader) {
  const Adapter ad = defaults();
  OpCall g{OpKind::Gather, "gather", {t({4, 6}, DType::F16), t({4, 2}, DType::I64)}, {t({4, 2}, DType::F16)}, {}};
  g.attrs.axis = 1;
  const IndexPlan p = ok(plan_index(ad.caps(), g));
  EXPECT_EQ(p.shader.kernel, IndexKernel::Gather);
  EXPECT_EQ(p.shader.elem_bytes, 2);
  EXPECT_EQ(p.shader.index_words, 2);
  expect_variant_expands(p.variant(), "gather");
  g.inputs[1] = t({4, 2}, DType::I32);
  const IndexPlan p32 = ok(plan_index(ad.caps(), g));
  EXPECT_EQ(p32.shader.index_words, 1);
  EXPECT_FALSE(p32.key() == p.key());
  g.inputs[1] = t({4, 2}, DType::F32);
  EXPECT_FALSE(plan_index(ad.caps(), g).ok());
  OpCall c{OpKind::Concat, "concat", {t({2, 3}, DType::I64), t({2, 5}, DType::I64)}, {t({2, 8}, DType::I64)}, {}};
  c.attrs.axis = 1;
  const IndexPlan pc = ok(plan_index(ad.caps(), c));
  EXPECT_EQ(pc.shader.kernel, IndexKernel::Concat);
  EXPECT_EQ(pc.shader.elem_bytes, 8);
  expect_variant_expands(pc.variant(), "concat");
  c.inputs[1] = t({2, 5}, DType::I32);
  EXPECT_FALSE(plan_index(ad.caps(), c).ok());
}
