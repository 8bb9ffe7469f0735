// Kernel choice of the planned WebGPU families (src/webgpu/plans/): plan_matmul and
// plan_qmatmul for given adapter capabilities and tuning, their rejects and typed errors, their
// pipeline keys, and their shader variants run through the WGSL preprocessor. No GPU needed:
// plans make no Dawn call, and the capabilities are plain structs here.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "plan_test_support.hpp"
#include "runtime/settings.hpp"
#include "settings_env.hpp"
#include "webgpu/plans/matmul_plan.hpp"
#include "webgpu/plans/qmatmul_plan.hpp"
#include "webgpu/shader_registry.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using namespace wgt::webgpu;

namespace {

using test::Adapter;
using test::big_gpu;
using test::lavapipe_sid;
using test::tensor_core_gpu;
using test::webgpu_defaults;

OpCall matmul_call(const Tensor& a, const Tensor& b, bool transpose_b, DType out_dt = DType::F32) {
  const int64_t M = a.size(-2), N = transpose_b ? b.size(-2) : b.size(-1);
  Shape os = a.dim() >= b.dim() ? a.shape() : b.shape();
  os[os.size() - 2] = M;
  os[os.size() - 1] = N;
  OpCall c{OpKind::MatMul, transpose_b ? "matmul_t" : "matmul", {a, b}, {Tensor::empty(os, out_dt)}, {}};
  c.attrs.transpose_b = transpose_b;
  return c;
}

MatmulPlan plan_ok(const Adapter& ad, const OpCall& c, const MatmulTuning& tu = {}) {
  Planned<MatmulPlan> p = plan_matmul(ad.caps(), tu, c);
  EXPECT_TRUE(p.ok()) << p.reject;
  return p.plan;
}

using test::expect_variant_expands;

}  // namespace

TEST(MatmulPlan, SmallMPicksTheGemvsByBLayout) {
  const Adapter ad = big_gpu();
  // x @ W^T with W's rows 8-element aligned: the vector gemv (256 x 32, 2 rows per invocation).
  MatmulPlan p = plan_ok(ad, matmul_call(Tensor::empty({1, 64}, DType::F32), Tensor::empty({40, 64}, DType::F32), true));
  EXPECT_EQ(p.shader.kernel, MatmulKernel::GemvVec);
  EXPECT_EQ(p.name(), "gemv_vec 256x32x2 m1 sg");
  EXPECT_EQ(p.col_tile(), 256u / 32 * 2);
  // N-contiguous B: the scalar gemv, 512 x 64 where the device takes 512 invocations.
  p = plan_ok(ad, matmul_call(Tensor::empty({3, 64}, DType::F32), Tensor::empty({64, 40}, DType::F32), false));
  EXPECT_EQ(p.name(), "gemv 512x64 nfast");
  p = plan_ok(webgpu_defaults(), matmul_call(Tensor::empty({3, 64}, DType::F32), Tensor::empty({64, 40}, DType::F32), false));
  EXPECT_EQ(p.name(), "gemv 256x8 nfast");
  // K-contiguous B whose rows are not 8-element aligned: the scalar gemv.
  p = plan_ok(ad, matmul_call(Tensor::empty({1, 60}, DType::F32), Tensor::empty({40, 60}, DType::F32), true));
  EXPECT_EQ(p.name(), "gemv 256x64 kfast");
  // Subgroups off in the tuning, or absent: the tree reduction.
  MatmulTuning tu;
  tu.subgroups = false;
  p = plan_ok(ad, matmul_call(Tensor::empty({2, 64}, DType::F32), Tensor::empty({40, 64}, DType::F32), true), tu);
  EXPECT_EQ(p.name(), "gemv_vec 256x32x2 m2 tree");
  // M = 5 is past the gemvs.
  p = plan_ok(ad, matmul_call(Tensor::empty({5, 64}, DType::F32), Tensor::empty({40, 64}, DType::F32), true));
  EXPECT_EQ(p.shader.kernel, MatmulKernel::Tiled);
}

TEST(MatmulPlan, TiledTileAndVec4ByShapeAndDevice) {
  // 256 tiles of 128 x 128 fill the GPU: the big tile where its 16.5 KiB fit.
  const OpCall large = matmul_call(Tensor::empty({2048, 8}, DType::F32), Tensor::empty({8, 2048}, DType::F32), false);
  EXPECT_EQ(plan_ok(big_gpu(), large).name(), "tiled 128x128x8 8x8 acc=f32 a:k b:n a:v4 b:v4 o:v4");
  // 64 x 64 x 8 tiles on 256 invocations split into 128 vec4 per chunk: scalar loads.
  EXPECT_EQ(plan_ok(webgpu_defaults(), large).name(), "tiled 64x64x8 4x4 acc=f32 a:k b:n o:v4");
  // Odd sizes: no vec4 anywhere.
  const OpCall odd = matmul_call(Tensor::empty({7, 5}, DType::F32), Tensor::empty({5, 9}, DType::F32), false);
  EXPECT_EQ(plan_ok(big_gpu(), odd).name(), "tiled 64x64x8 4x4 acc=f32 a:k b:n");
  // A transposed view is read in place (M-contiguous A), a view without a unit stride is
  // compacted first and then read as a contiguous copy.
  const Tensor at = Tensor::empty({8, 16}, DType::F32).t();  // [16, 8], strides (1, 16)
  MatmulPlan p = plan_ok(big_gpu(), matmul_call(at, Tensor::empty({8, 12}, DType::F32), false));
  EXPECT_FALSE(p.compact_a);
  EXPECT_EQ(p.name(), "tiled 64x64x8 4x4 acc=f32 a:m b:n o:v4");
  MatmulTuning deep;  // BK 16: whole vec4 per invocation, so both operands load vec4
  deep.tile = {64, 64, 16, 4, 4};
  EXPECT_EQ(plan_ok(big_gpu(), matmul_call(at, Tensor::empty({8, 12}, DType::F32), false), deep).name(),
            "tiled 64x64x16 4x4 acc=f32 a:m b:n a:v4 b:v4 o:v4");
  const Tensor strided = Tensor::empty({16, 16}, DType::F32).slice(0, 0, 16, 2).slice(1, 0, 16, 2);  // [8, 8]
  p = plan_ok(big_gpu(), matmul_call(strided, Tensor::empty({8, 12}, DType::F32), false));
  EXPECT_TRUE(p.compact_a);
  EXPECT_EQ(p.name(), "tiled 64x64x8 4x4 acc=f32 a:k b:n o:v4");
  // vec off in the tuning; a forced tile.
  MatmulTuning tu;
  tu.vec = false;
  tu.tile = {32, 32, 8, 4, 4};
  EXPECT_EQ(plan_ok(big_gpu(), large, tu).name(), "tiled 32x32x8 4x4 acc=f32 a:k b:n");
}

TEST(MatmulPlan, F16StorageForms) {
  const OpCall h = matmul_call(Tensor::empty({8, 16}, DType::F16), Tensor::empty({16, 8}, DType::F16), false, DType::F16);
  EXPECT_EQ(plan_ok(big_gpu(), h).shader.a_store, MatmulStore::F16);
  MatmulPlan p = plan_ok(webgpu_defaults(), h);  // no shader-f16: packed, paired output words
  EXPECT_EQ(p.shader.a_store, MatmulStore::F16Packed);
  EXPECT_EQ(p.shader.out, MatmulOut::Paired);
  MatmulTuning tu;
  tu.f16_acc = true;
  EXPECT_EQ(plan_ok(big_gpu(), h, tu).shader.acc16, 1);
  tu.f16 = F16Store::Native;
  EXPECT_THROW(plan_matmul(webgpu_defaults().caps(), tu, h), Error);
  // Mixed precision: f32 A and output, f16 B stored on its own.
  p = plan_ok(big_gpu(), matmul_call(Tensor::empty({1, 64}, DType::F32), Tensor::empty({40, 64}, DType::F16), true));
  EXPECT_EQ(p.name(), "gemv_vec 256x32x2 m1 sg b:f16");
  // f32 calls never ask for f16 support, whatever the tuning says.
  EXPECT_TRUE(plan_matmul(webgpu_defaults().caps(), tu,
                          matmul_call(Tensor::empty({8, 8}, DType::F32), Tensor::empty({8, 8}, DType::F32), false))
                  .ok());
}

TEST(MatmulPlan, FusionsAndRoutes) {
  const Adapter ad = big_gpu();
  // RMSNorm prologue and addend fused into the vector gemv.
  OpCall c = matmul_call(Tensor::empty({1, 64}, DType::F32), Tensor::empty({40, 64}, DType::F32), true);
  c.inputs.push_back(Tensor::empty({1, 40}, DType::F32));
  c.attrs.has_bias = true;
  c.inputs.push_back(Tensor::empty({64}, DType::F32));
  c.attrs.prologue = OpAttrs::Prologue::RmsNorm;
  MatmulPlan p = plan_ok(ad, c);
  EXPECT_EQ(p.route, MatmulRoute::Kernel);
  EXPECT_EQ(p.name(), "gemv_vec 256x32x2 m1 sg +c +norm");
  // Past the gemvs, the prologue runs first as its own op.
  OpCall big = matmul_call(Tensor::empty({8, 64}, DType::F32), Tensor::empty({40, 64}, DType::F32), true);
  big.inputs.push_back(Tensor::empty({64}, DType::F32));
  big.attrs.prologue = OpAttrs::Prologue::RmsNorm;
  EXPECT_EQ(plan_ok(ad, big).route, MatmulRoute::PrologueFirst);
  // Gemvs off in the tuning: no vector gemv, so no fusion either.
  MatmulTuning tu;
  tu.gemv_off = true;
  EXPECT_EQ(plan_ok(ad, c, tu).route, MatmulRoute::PrologueFirst);
}

TEST(MatmulPlan, RopeAppendEpilogueFusedOrNot) {
  const Adapter ad = big_gpu();
  auto call = [](bool neox) {
    // q 2 heads, k/v 1 head of 8: output [1, 32]; caches [4, 1, 8].
    OpCall c = matmul_call(Tensor::empty({1, 64}, DType::F32), Tensor::empty({32, 64}, DType::F32), true);
    c.inputs.push_back(Tensor::empty({4, 1, 8}, DType::F16));
    c.inputs.push_back(Tensor::empty({4, 1, 8}, DType::F16));
    c.inputs.push_back(Tensor::empty({64}, DType::F32));
    c.attrs.prologue = OpAttrs::Prologue::RmsNorm;
    c.attrs.n_rot = 8;
    c.attrs.pos_offset = 2;
    c.attrs.scalar0 = 10000.0;
    c.attrs.rope_neox = neox;
    return c;
  };
  MatmulPlan p = plan_ok(ad, call(false));
  EXPECT_EQ(p.route, MatmulRoute::Kernel);
  EXPECT_EQ(p.name(), "gemv_vec 256x32x2 m1 sg +norm +rope_append");
  EXPECT_EQ(p.shader.cache_f16, 1);
  EXPECT_EQ(plan_ok(ad, call(true)).route, MatmulRoute::RopeAppendUnfused);  // neox pairs span invocations
  // With the small-M kernels off there is no vector gemv (its shape is not consulted).
  MatmulTuning tu;
  tu.gemv_off = true;
  EXPECT_EQ(plan_ok(ad, call(false), tu).route, MatmulRoute::RopeAppendUnfused);
  OpCall bad = call(false);
  bad.attrs.pos_offset = 4;  // past the cache
  EXPECT_EQ(plan_matmul(ad.caps(), {}, bad).reject, "the cache row is out of range");
}

TEST(MatmulPlan, RejectsWhatNoKernelRunsAndBadTuningIsAnError) {
  const Adapter ad = big_gpu();
  Planned<MatmulPlan> r =
      plan_matmul(ad.caps(), {}, matmul_call(Tensor::empty({4, 4}, DType::I32), Tensor::empty({4, 4}, DType::I32), false, DType::I32));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.reject.find("no WebGPU matmul kernel"), std::string::npos) << r.reject;
  OpCall mismatch = matmul_call(Tensor::empty({4, 4}, DType::F32), Tensor::empty({4, 4}, DType::F32), false);
  mismatch.outputs[0] = Tensor::empty({4, 5}, DType::F32);
  EXPECT_EQ(plan_matmul(ad.caps(), {}, mismatch).reject, "output shape does not match the operands");
  Adapter few = ad;
  few.l.max_storage_buffers_per_shader_stage = 2;
  EXPECT_EQ(plan_matmul(few.caps(), {}, matmul_call(Tensor::empty({4, 4}, DType::F32), Tensor::empty({4, 4}, DType::F32), false)).reject,
            "needs 3 storage buffers per stage");
  const OpCall ok = matmul_call(Tensor::empty({64, 64}, DType::F32), Tensor::empty({64, 64}, DType::F32), false);
  for (const auto& tile : {std::array<uint32_t, 5>{64, 64, 8, 3, 4}, std::array<uint32_t, 5>{256, 256, 64, 4, 4}}) {
    MatmulTuning tu;
    tu.tile = tile;
    try {
      (void)plan_matmul(ad.caps(), tu, ok);
      ADD_FAILURE() << "no throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(e.message().find("WGT_MATMUL_TILE"), std::string::npos) << e.message();
    }
  }
  MatmulTuning tu;
  tu.gemv = {64, 3};  // KS not a power of two
  EXPECT_THROW(plan_matmul(ad.caps(), tu, matmul_call(Tensor::empty({1, 8}, DType::F32), Tensor::empty({8, 8}, DType::F32), false)),
               Error);
}

TEST(MatmulPlan, KeysAreEqualExactlyForEqualShaders) {
  const Adapter ad = big_gpu();
  const MatmulPlan a = plan_ok(ad, matmul_call(Tensor::empty({1, 64}, DType::F32), Tensor::empty({40, 64}, DType::F32), true));
  const MatmulPlan b = plan_ok(ad, matmul_call(Tensor::empty({1, 128}, DType::F32), Tensor::empty({8, 128}, DType::F32), true));
  EXPECT_EQ(a.key(), b.key());  // same shader, other sizes (sizes travel in params)
  MatmulTuning tu;
  tu.subgroups = false;
  const MatmulPlan c = plan_ok(ad, matmul_call(Tensor::empty({1, 64}, DType::F32), Tensor::empty({40, 64}, DType::F32), true), tu);
  EXPECT_NE(a.key(), c.key());
  // Every distinct shader of a sweep has a distinct key and a distinct variant.
  std::set<std::string> names;
  std::set<decltype(PipelineKey::w)> keys;
  for (int64_t M : {1, 2, 3, 5, 64})
    for (bool tb : {false, true})
      for (DType dt : {DType::F32, DType::F16}) {
        const Tensor b = tb ? Tensor::empty({40, 64}, dt) : Tensor::empty({64, 40}, dt);
        const MatmulPlan p = plan_ok(ad, matmul_call(Tensor::empty({M, 64}, dt), b, tb, dt));
        names.insert(p.name() + (dt == DType::F16 ? " f16" : ""));  // names leave native f16 out
        keys.insert(p.key().w);
      }
  EXPECT_EQ(names.size(), keys.size());
}

TEST(MatmulPlan, EveryKernelVariantPreprocesses) {
  const Adapter ad = big_gpu();
  std::vector<OpCall> calls;
  for (DType dt : {DType::F32, DType::F16})
    for (int64_t M : {1, 3, 64})
      for (bool tb : {false, true}) {
        const Tensor b = tb ? Tensor::empty({40, 64}, dt) : Tensor::empty({64, 40}, dt);
        calls.push_back(matmul_call(Tensor::empty({M, 64}, dt), b, tb, dt));
      }
  OpCall fused = matmul_call(Tensor::empty({1, 64}, DType::F32), Tensor::empty({40, 64}, DType::F32), true);
  fused.inputs.push_back(Tensor::empty({1, 40}, DType::F32));
  fused.attrs.has_bias = true;
  fused.inputs.push_back(Tensor::empty({1, 64}, DType::F32));
  fused.attrs.prologue = OpAttrs::Prologue::SiluMul;
  calls.push_back(fused);
  for (const Adapter& a : {ad, webgpu_defaults()})
    for (const OpCall& c : calls) {
      const MatmulPlan p = plan_ok(a, c);
      if (p.route == MatmulRoute::Kernel) expect_variant_expands(p.variant(), p.name());
    }
}

namespace {

OpCall qcall(QType t, int64_t M, int64_t N, int64_t K) {
  const int64_t rb = static_cast<int64_t>(qtype_row_bytes(t, K));
  OpCall c{OpKind::QMatMul, "qmatmul_t", {Tensor::empty({M, K}, DType::F32), Tensor::empty({N * rb}, DType::U8)},
           {Tensor::empty({M, N}, DType::F32)}, {}};
  c.attrs.qtype = static_cast<uint8_t>(t);
  return c;
}
QMatmulPlan qplan_ok(const Adapter& ad, const OpCall& c, const QMatvecTuning& tu = {}) {
  Planned<QMatmulPlan> p = plan_qmatmul(ad.caps(), tu, c);
  EXPECT_TRUE(p.ok()) << p.reject;
  return p.plan;
}

}  // namespace

TEST(QMatmulPlan, KernelByMFormatAndFeatures) {
  const Adapter ad = big_gpu();
  QMatmulPlan p = qplan_ok(ad, qcall(QType::Q4_0, 1, 64, 256));
  EXPECT_STREQ(p.kernel_name(), "i8x2");
  EXPECT_EQ(p.shader.sg, 1);
  EXPECT_STREQ(qplan_ok(ad, qcall(QType::Q4_1, 1, 64, 256)).kernel_name(), "stream");  // no i8 part
  EXPECT_STREQ(qplan_ok(ad, qcall(QType::Q5_K, 1, 64, 256)).kernel_name(), "stream");
  QMatvecTuning tu;
  tu.kernel = QMatvecKernel::I8;
  EXPECT_STREQ(qplan_ok(ad, qcall(QType::Q6_K, 4, 64, 256), tu).kernel_name(), "i8");
  tu.packed_dot = false;  // as an adapter without dot4I8Packed
  EXPECT_STREQ(qplan_ok(ad, qcall(QType::Q6_K, 4, 64, 256), tu).kernel_name(), "stream");
  Adapter no_dot = ad;
  no_dot.f.packed_dot = false;
  EXPECT_STREQ(qplan_ok(no_dot, qcall(QType::Q8_0, 1, 64, 256)).kernel_name(), "stream");
  // Subgroups larger than the 32-lane row group (or unknown) take the workgroup reduction.
  Adapter wide = ad;
  wide.l.subgroup_max_size = 64;
  EXPECT_EQ(qplan_ok(wide, qcall(QType::Q4_0, 1, 64, 256)).shader.sg, 0);
  // The f32-x kernel's defaults: 4 warps, 4 rows (Q6_K 2), 2 blocks per trip.
  tu = {};
  tu.kernel = QMatvecKernel::Stream;
  p = qplan_ok(ad, qcall(QType::Q6_K, 2, 64, 256), tu);
  EXPECT_EQ(p.shader.rows, 2);
  EXPECT_EQ(p.shader.warps, 4);
  EXPECT_EQ(p.shader.unroll, 2);
  EXPECT_EQ(p.group_rows(), 8u);
  // M > 4: the tiled kernel, 16*8 tiles where two 32 x 129 f32 tiles fit, else 16*4.
  EXPECT_EQ(qplan_ok(ad, qcall(QType::Q4_K, 5, 64, 256)).shader.tile_t, 8);
  EXPECT_EQ(qplan_ok(webgpu_defaults(), qcall(QType::Q4_K, 5, 64, 256)).shader.tile_t, 4);
}

// M > 4 on an adapter with f16 subgroup matrices: the prefill on them (q_matmul_sgmat), with
// the f16 kernel's default tiles (B = W's rows, K-contiguous); the tiled kernel without them
// or when the tuning turns it off.
TEST(QMatmulPlan, PrefillOnSubgroupMatrices) {
  const Adapter tc = tensor_core_gpu();
  // Enough 128x256 tiles to fill the GPU (256 without a known multiprocessor count).
  QMatmulPlan p = qplan_ok(tc, qcall(QType::Q4_0, 1024, 8192, 256));
  EXPECT_STREQ(p.kernel_name(), "sgmat");
  const QMatmulShader& s = p.shader;
  EXPECT_EQ(std::vector<int>({s.bm, s.bn, s.bk, s.fm, s.fn, s.sm, s.sn, s.sk, s.sgs, s.vec_out}),
            std::vector<int>({128, 256, 16, 4, 4, 16, 16, 16, 32, 1}));
  expect_variant_expands(p.variant(), "q4_0 sgmat 128x256");
  // A forced tile (WGT_QMATMUL_SGMAT), and one the kernel cannot decode whole octets into.
  QMatvecTuning forced;
  forced.prefill_tile = {128, 128, 32, 4, 2};
  p = qplan_ok(tc, qcall(QType::Q4_0, 1024, 8192, 256), forced);
  EXPECT_EQ(std::vector<int>({p.shader.bm, p.shader.bn, p.shader.bk, p.shader.fm, p.shader.fn}),
            std::vector<int>({128, 128, 32, 4, 2}));
  forced.prefill_tile = {64, 64, 4, 2, 2};
  try {
    (void)plan_qmatmul(tc.caps(), forced, qcall(QType::Q4_0, 64, 64, 256));
    ADD_FAILURE() << "a BK of 4 must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
  }
  // Few tiles: 64x64; odd N: scalar stores.
  p = qplan_ok(tc, qcall(QType::Q6_K, 17, 37, 256));
  EXPECT_STREQ(p.kernel_name(), "sgmat");
  EXPECT_EQ(std::vector<int>({p.shader.bm, p.shader.bn, p.shader.bk, p.shader.vec_out}), std::vector<int>({64, 64, 32, 0}));
  expect_variant_expands(p.variant(), "q6_k sgmat 64x64");
  // Formats are separate pipelines.
  EXPECT_NE(qplan_ok(tc, qcall(QType::Q8_0, 17, 36, 256)).key().w, qplan_ok(tc, qcall(QType::Q4_K, 17, 36, 256)).key().w);
  // sid's lavapipe: 8x8x8 fragments, 4x4 per subgroup of 8.
  p = qplan_ok(lavapipe_sid(), qcall(QType::Q4_K, 40, 64, 512));
  EXPECT_STREQ(p.kernel_name(), "sgmat");
  EXPECT_EQ(std::vector<int>({p.shader.bm, p.shader.fm, p.shader.fn, p.shader.sm, p.shader.sgs}),
            std::vector<int>({64, 4, 4, 8, 8}));
  expect_variant_expands(p.variant(), "q4_k sgmat 8x8x8");
  // The matvec below M = 5, the tiled kernel without matrices or with the switch off.
  EXPECT_STREQ(qplan_ok(tc, qcall(QType::Q4_0, 4, 64, 256)).kernel_name(), "i8x2");
  EXPECT_STREQ(qplan_ok(big_gpu(), qcall(QType::Q4_0, 64, 64, 256)).kernel_name(), "tiled");
  QMatvecTuning off;
  off.prefill_sgmat = false;
  EXPECT_STREQ(qplan_ok(tc, qcall(QType::Q4_0, 64, 64, 256), off).kernel_name(), "tiled");
}

// KVCache::rms_norm_qkv_append_rope with a quantized weight: the rope_append epilogue in the
// subgroup matvec (rows kept even), else the unfused route (neox pairs, no subgroups, M > 1).
TEST(QMatmulPlan, RopeAppendEpilogue) {
  auto call = [](QType t, int64_t H, int64_t Hkv, int64_t D, int64_t M, bool neox, bool factors) {
    const int64_t K = 256, N = (H + 2 * Hkv) * D;
    OpCall c = qcall(t, M, N, K);
    c.inputs.push_back(Tensor::empty({8, Hkv, D}, DType::F16));
    c.inputs.push_back(Tensor::empty({8, Hkv, D}, DType::F16));
    if (factors) c.inputs.push_back(Tensor::empty({D / 2}, DType::F32));
    c.inputs.push_back(Tensor::empty({K}, DType::F32));
    c.attrs.prologue = OpAttrs::Prologue::RmsNorm;
    c.attrs.n_rot = D;
    c.attrs.rope_neox = neox;
    c.attrs.rope_factors = factors;
    c.attrs.pos_offset = 3;
    return c;
  };
  const Adapter ad = big_gpu();
  for (QType t : {QType::Q4_0, QType::Q6_K, QType::Q5_K}) {
    // A small q/k/v (N = 64): the i8 split would halve the rows to 1; they stay even.
    const QMatmulPlan p = qplan_ok(ad, call(t, 4, 2, 8, 1, false, t == QType::Q6_K));
    EXPECT_EQ(p.route, QMatmulRoute::Kernel) << qtype_name(t);
    EXPECT_EQ(p.shader.epi, 1) << qtype_name(t);
    EXPECT_EQ(p.shader.rows % 2, 0) << qtype_name(t);
    EXPECT_EQ(p.shader.cache_f16, 1);
    EXPECT_EQ(p.shader.epi_freqs, t == QType::Q6_K ? 1 : 0);
    expect_variant_expands(p.variant(), std::string(qtype_name(t)) + " +rope_append");
  }
  EXPECT_EQ(qplan_ok(ad, call(QType::Q4_0, 4, 2, 8, 1, true, false)).route, QMatmulRoute::RopeAppendUnfused);
  Adapter no_sg = ad;
  no_sg.f.subgroups = false;
  EXPECT_EQ(qplan_ok(no_sg, call(QType::Q4_0, 4, 2, 8, 1, false, false)).route, QMatmulRoute::RopeAppendUnfused);
  // The epilogue takes one row.
  EXPECT_FALSE(plan_qmatmul(ad.caps(), {}, call(QType::Q4_0, 4, 2, 8, 2, false, false)).ok());
}

TEST(QMatmulPlan, FusionsAndRoutes) {
  const Adapter ad = big_gpu();
  for (int64_t M : {1, 6}) {
    OpCall norm = qcall(QType::Q4_0, M, 64, 256);
    norm.inputs.push_back(Tensor::empty({256}, DType::F32));
    norm.attrs.prologue = OpAttrs::Prologue::RmsNorm;
    OpCall add = qcall(QType::Q4_0, M, 64, 256);
    add.inputs.push_back(Tensor::empty({M, 64}, DType::F32));
    add.attrs.has_bias = true;
    const QMatmulPlan pn = qplan_ok(ad, norm), pa = qplan_ok(ad, add);
    if (M == 1) {
      EXPECT_EQ(pn.route, QMatmulRoute::Kernel);
      EXPECT_EQ(pn.shader.norm, 1);
      EXPECT_EQ(pa.shader.add, 1);
    } else {
      EXPECT_EQ(pn.route, QMatmulRoute::PrologueFirst);
      EXPECT_EQ(pa.route, QMatmulRoute::AddAfter);
    }
  }
  // x as a row of a larger tensor (offset a multiple of 4): read in place by the matvec,
  // compacted for the tiled kernel.
  OpCall c = qcall(QType::Q8_0, 1, 8, 64);
  c.inputs[0] = Tensor::empty({2, 64}, DType::F32).slice(0, 1, 2);
  EXPECT_FALSE(qplan_ok(ad, c).compact_x);
  c = qcall(QType::Q8_0, 5, 8, 64);
  c.inputs[0] = Tensor::empty({6, 64}, DType::F32).slice(0, 1, 6);
  EXPECT_TRUE(qplan_ok(ad, c).compact_x);
}

// The i8 kernels' automatic shape (8 warps, i8x2 ROWS 8 at most): ROWS halves down to 4, then
// KSPLIT doubles up to 4, then ROWS halves down to 1, until the grid has 192 workgroups; a set
// ROWS is kept. Without a multiprocessor count (wave 0) the shape is the same on every adapter.
TEST(QMatmulPlan, I8SplitAdaptsToTheGrid) {
  const Adapter ad = webgpu_defaults();
  Adapter dot = ad;
  dot.f.packed_dot = true;
  struct Want { int64_t M, N; uint32_t rows_set, rows, ksplit; };
  for (const Want c : {Want{1, 16384, 0, 8, 1}, Want{1, 8192, 0, 4, 1}, Want{1, 4096, 0, 4, 2}, Want{1, 1024, 0, 2, 4},
                       Want{1, 37, 0, 1, 4}, Want{4, 256, 0, 2, 4}, Want{1, 37, 8, 8, 4}}) {
    QMatvecTuning tu;
    tu.wave = 0;
    if (c.rows_set) tu.rows = c.rows_set;
    const QMatmulPlan p = qplan_ok(dot, qcall(QType::Q4_0, c.M, c.N, 256), tu);
    EXPECT_EQ(p.shader.rows, c.rows) << "N=" << c.N << " M=" << c.M;
    EXPECT_EQ(p.shader.ksplit, c.ksplit) << "N=" << c.N << " M=" << c.M;
    EXPECT_EQ(p.shader.warps, 8);
  }
}

// With a multiprocessor count C (the adapter's, or the tuning's wave), i8x2 at KSPLIT 1 picks
// ROWS in [4, 8] minimizing ceil(workgroups / C) * ROWS: N = 14336 with C = 132 takes ROWS 7
// (256 workgroups: 2 waves of 56 rows, against 2 of 64 at ROWS 8), N = 16896 keeps 8 (264 =
// 2 waves), N = 12672 takes 6 (264); C = 0 turns the rule off; a set ROWS is kept.
TEST(QMatmulPlan, I8x2RowsByWaves) {
  Adapter ad = big_gpu();
  ad.l.max_compute_invocations_per_workgroup = 256;
  struct Want { int64_t N; std::optional<uint32_t> wave; uint32_t rows_set, rows; };
  for (const Want c : {Want{14336, 132, 0, 7}, Want{14336, 0, 0, 8}, Want{16896, 132, 0, 8}, Want{14336, 132, 8, 8},
                       Want{12672, 132, 0, 6}, Want{14336, std::nullopt, 0, 8}}) {
    QMatvecTuning tu;
    tu.wave = c.wave;
    if (c.rows_set) tu.rows = c.rows_set;
    EXPECT_EQ(qplan_ok(ad, qcall(QType::Q4_0, 1, c.N, 256), tu).shader.rows, c.rows) << "N=" << c.N;
  }
  ad.l.compute_units = 132;  // the adapter's count when the tuning has none
  EXPECT_EQ(qplan_ok(ad, qcall(QType::Q4_0, 1, 14336, 256)).shader.rows, 7);
}

TEST(QMatmulPlan, RejectsAndBadTuningErrors) {
  const Adapter ad = big_gpu();
  OpCall c = qcall(QType::Q4_0, 1, 8, 64);
  c.inputs[0] = Tensor::empty({1, 60}, DType::F32);
  EXPECT_EQ(plan_qmatmul(ad.caps(), {}, c).reject, "K is not a positive multiple of the block size");
  c = qcall(QType::Q4_0, 1, 8, 64);
  c.attrs.qtype = 99;
  EXPECT_EQ(plan_qmatmul(ad.caps(), {}, c).reject, "invalid qtype tag");
  // A split that does not divide the warps is InvalidArgument; more warps than the device
  // runs is Unsupported.
  for (const auto& [ksplit, warps] : {std::pair{3u, 8u}, std::pair{4u, 2u}}) {
    QMatvecTuning tu;
    tu.ksplit = ksplit;
    tu.warps = warps;
    try {
      (void)plan_qmatmul(ad.caps(), tu, qcall(QType::Q4_0, 1, 5, 512));
      ADD_FAILURE() << "no error for KSPLIT " << ksplit << " with " << warps << " warps";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
      EXPECT_NE(e.message().find("WGT_QMATVEC_KSPLIT"), std::string::npos) << e.what();
    }
  }
  QMatvecTuning tu;
  tu.warps = 8;
  try {
    (void)plan_qmatmul(webgpu_defaults().caps(), tu, qcall(QType::Q4_0, 1, 5, 512));  // 256 invocations: fits
    Adapter small = webgpu_defaults();
    small.l.max_compute_invocations_per_workgroup = 128;
    (void)plan_qmatmul(small.caps(), tu, qcall(QType::Q4_0, 1, 5, 512));
    ADD_FAILURE() << "no error for 8 warps on a 128-invocation device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
  }
}

TEST(QMatmulPlan, EveryKernelVariantPreprocesses) {
  std::set<decltype(PipelineKey::w)> keys;
  int plans = 0;
  for (QType t : {QType::Q8_0, QType::Q4_0, QType::Q4_1, QType::Q4_K, QType::Q5_K, QType::Q6_K})
    for (QMatvecKernel k : {QMatvecKernel::Stream, QMatvecKernel::I8x2})
      for (int64_t M : {1, 8})
        for (int fuse = 0; fuse < 3; ++fuse) {
          const int64_t K = qtype_info(t).block_elems * 2;
          OpCall c = qcall(t, M, 16, K);
          if (fuse == 1) {
            c.inputs.push_back(Tensor::empty({M, 16}, DType::F32));
            c.attrs.has_bias = true;
            c.inputs.push_back(Tensor::empty({K}, DType::F32));
            c.attrs.prologue = OpAttrs::Prologue::RmsNorm;
          } else if (fuse == 2) {
            c.inputs.push_back(Tensor::empty({M, K}, DType::F32));
            c.attrs.prologue = OpAttrs::Prologue::SiluMul;
          }
          QMatvecTuning tu;
          tu.kernel = k;
          const QMatmulPlan p = qplan_ok(big_gpu(), c, tu);
          if (p.route != QMatmulRoute::Kernel) continue;
          if (keys.insert(p.key().w).second) {
            ++plans;
            expect_variant_expands(p.variant(), std::string(qtype_name(t)) + " " + p.kernel_name());
          }
        }
  EXPECT_GT(plans, 30);
}

TEST(MatmulPlan, SubgroupMatrixKernelForAlignedF16) {
  const Adapter ad = tensor_core_gpu();
  ASSERT_TRUE(sgmat_shape(ad.caps()).has_value());
  EXPECT_EQ(sgmat_shape(ad.caps())->n, 16u);  // 16x16x16 preferred over 16x8x16
  // Few output tiles: 64x64 with 2x2 fragments per subgroup; B N-contiguous, vec4 stores.
  MatmulPlan p = plan_ok(ad, matmul_call(Tensor::empty({64, 128}, DType::F16), Tensor::empty({128, 96}, DType::F16),
                                         false, DType::F16));
  EXPECT_EQ(p.name(), "sgmat 64x64x32 2x2 frag=16x16x16 b:n o:v4 v:wide");
  expect_variant_expands(p.variant(), p.name());
  // Many tiles (and matmul_t): for B K-contiguous 128x256 with 4x4 fragments, for N-contiguous
  // 128x128 with 4x2.
  p = plan_ok(ad, matmul_call(Tensor::empty({4096, 256}, DType::F16), Tensor::empty({4096, 256}, DType::F16), true,
                              DType::F16));
  EXPECT_EQ(p.name(), "sgmat 128x256x16 4x4 frag=16x16x16 b:k o:v4 v:wide");
  expect_variant_expands(p.variant(), p.name());
  EXPECT_EQ(p.row_tile(), 128u);
  EXPECT_EQ(p.col_tile(), 256u);
  p = plan_ok(ad, matmul_call(Tensor::empty({4096, 256}, DType::F16), Tensor::empty({256, 4096}, DType::F16), false,
                              DType::F16));
  EXPECT_EQ(p.name(), "sgmat 128x128x32 4x2 frag=16x16x16 b:n o:v4 v:wide");
  expect_variant_expands(p.variant(), p.name());
  // Odd N: scalar stores; still sgmat, and with 16-byte loads, since B's rows stay 8-aligned
  // along K.
  p = plan_ok(ad, matmul_call(Tensor::empty({40, 64}, DType::F16), Tensor::empty({37, 64}, DType::F16), true,
                              DType::F16));
  EXPECT_EQ(p.name(), "sgmat 64x64x32 2x2 frag=16x16x16 b:k v:wide");
  expect_variant_expands(p.variant(), p.name());
  // Only the narrow shape: 16x8x16 fragments, twice as many along N.
  Adapter narrow = ad;
  narrow.f.subgroup_matrix_configs = {{2, 1, 16, 8, 16}};
  p = plan_ok(narrow, matmul_call(Tensor::empty({64, 128}, DType::F16), Tensor::empty({128, 96}, DType::F16), false,
                                  DType::F16));
  EXPECT_EQ(p.name(), "sgmat 64x64x32 2x4 frag=16x8x16 b:n o:v4 v:wide");
  // A tuned tile.
  MatmulTuning tu;
  tu.sgmat = {{64, 128, 32, 2, 4}};
  p = plan_ok(ad, matmul_call(Tensor::empty({64, 128}, DType::F16), Tensor::empty({128, 96}, DType::F16), false,
                              DType::F16), tu);
  EXPECT_EQ(p.name(), "sgmat 64x128x32 2x4 frag=16x16x16 b:n o:v4 v:wide");
}

TEST(MatmulPlan, SubgroupMatrixKernelOn8x8x8Fragments) {
  Adapter lvp = lavapipe_sid();
  const std::optional<SgMatShape> sh = sgmat_shape(lvp.caps());
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->m * 100 + sh->n * 10 + sh->k, 888u);
  EXPECT_EQ(sh->subgroup, 8u);
  // 64x64 with 4x4 fragments per subgroup: 4 subgroups of 8 invocations.
  MatmulPlan p = plan_ok(lvp, matmul_call(Tensor::empty({64, 128}, DType::F16), Tensor::empty({128, 96}, DType::F16),
                                          false, DType::F16));
  EXPECT_EQ(p.name(), "sgmat 64x64x32 4x4 frag=8x8x8 b:n o:v4 v:wide");
  expect_variant_expands(p.variant(), p.name());
  // Many tiles: the 128-row defaults would need 8 fragments per subgroup, so 64x64 stays.
  p = plan_ok(lvp, matmul_call(Tensor::empty({4096, 256}, DType::F16), Tensor::empty({4096, 256}, DType::F16), true,
                               DType::F16));
  EXPECT_EQ(p.name(), "sgmat 64x64x32 4x4 frag=8x8x8 b:k o:v4 v:wide");
  // A forced 128x128 tile fits 32 KiB with BK 16, not with BK 32 (a typed error); N = 260 is
  // not a multiple of 8, so the staged path.
  MatmulTuning tu;
  tu.sgmat = {{128, 128, 16, 4, 4}};
  p = plan_ok(lvp, matmul_call(Tensor::empty({130, 96}, DType::F16), Tensor::empty({96, 260}, DType::F16), false,
                               DType::F16), tu);
  EXPECT_EQ(p.name(), "sgmat 128x128x16 4x4 frag=8x8x8 b:n o:v4 v:staged");
  tu.sgmat = {{128, 128, 32, 4, 4}};
  EXPECT_THROW(plan_matmul(lvp.caps(), tu, matmul_call(Tensor::empty({130, 96}, DType::F16),
                                                       Tensor::empty({96, 260}, DType::F16), false, DType::F16)),
               Error);
  // Where the 16-row shapes exist too, they win.
  Adapter both = lvp;
  both.f.subgroup_matrix_configs.push_back({2, 1, 16, 8, 16});
  ASSERT_TRUE(sgmat_shape(both.caps()).has_value());
  EXPECT_EQ(sgmat_shape(both.caps())->m, 16u);
  both.f.subgroup_matrix_configs.push_back({2, 1, 16, 16, 16});
  EXPECT_EQ(sgmat_shape(both.caps())->n, 16u);
  // Only f16 -> f16 8x8x8: no f32 accumulator, no sgmat.
  Adapter f16_only = lvp;
  f16_only.f.subgroup_matrix_configs = {{2, 2, 8, 8, 8}};
  EXPECT_FALSE(sgmat_shape(f16_only.caps()).has_value());
}

// The K-chunk data path (MatmulTuning::sgmat_variant): Auto takes the 16-byte loads where the
// tile and the call allow them; a forced path runs where the call is 8-element aligned, is kept
// staged where it is not, and Wide is a typed error where the tile cannot run it; the path is
// in the name and the defines; the ablation is loud in the name.
TEST(MatmulPlan, SubgroupMatrixDataPaths) {
  const Adapter ad = tensor_core_gpu();
  const OpCall nn = matmul_call(Tensor::empty({256, 128}, DType::F16), Tensor::empty({128, 256}, DType::F16), false,
                                DType::F16);
  const OpCall nt = matmul_call(Tensor::empty({256, 128}, DType::F16), Tensor::empty({256, 128}, DType::F16), true,
                                DType::F16);
  auto define = [](const ShaderVariant& v, const std::string& k) {
    for (const auto& d : v.defines)
      if (d.first == k) return d.second;
    return std::string("?");
  };
  const std::pair<SgVariant, const char*> paths[] = {
      {SgVariant::Auto, " v:wide"}, {SgVariant::Wide, " v:wide"}, {SgVariant::Staged, " v:staged"}};
  for (const auto& [v, tag] : paths) {
    MatmulTuning tu;
    tu.sgmat_variant = v;
    const bool wide = std::string(tag) == " v:wide";
    for (const OpCall* c : {&nn, &nt}) {
      const MatmulPlan p = plan_ok(ad, *c, tu);
      EXPECT_EQ(p.name(), std::string("sgmat 64x64x32 2x2 frag=16x16x16 ") + (c == &nn ? "b:n" : "b:k") + " o:v4" + tag);
      EXPECT_EQ(define(p.variant(), "SG_FETCH"), wide ? "1" : "0") << p.name();
      EXPECT_EQ(define(p.variant(), "VEC8"), wide ? "true" : "false") << p.name();
      EXPECT_EQ(define(p.variant(), "P_BIND"), "3") << p.name();  // a, b, o, params: no extra binding
      expect_variant_expands(p.variant(), p.name());
    }
    // K % 8 != 0, N % 8 != 0 with N-contiguous B, an A row stride % 8 != 0, an offset % 8 != 0:
    // the staged path (vec4 loads still aligned).
    const Tensor a68 = Tensor::empty({64, 68}, DType::F16);
    EXPECT_EQ(plan_ok(ad, matmul_call(a68, Tensor::empty({68, 64}, DType::F16), false, DType::F16), tu).shader.sgv,
              static_cast<uint8_t>(SgVariant::Staged));
    EXPECT_EQ(plan_ok(ad, matmul_call(Tensor::empty({64, 64}, DType::F16), Tensor::empty({64, 68}, DType::F16), false,
                                      DType::F16), tu).shader.sgv,
              static_cast<uint8_t>(SgVariant::Staged));
    EXPECT_EQ(plan_ok(ad, matmul_call(a68.slice(1, 0, 64), Tensor::empty({64, 64}, DType::F16), false, DType::F16), tu)
                  .shader.sgv,
              static_cast<uint8_t>(SgVariant::Staged));
    const Tensor a72 = Tensor::empty({64, 72}, DType::F16);
    const MatmulPlan off4 = plan_ok(ad, matmul_call(a72.slice(1, 4, 68), Tensor::empty({64, 64}, DType::F16), false,
                                                    DType::F16), tu);
    EXPECT_EQ(off4.shader.kernel, MatmulKernel::SgMat);
    EXPECT_EQ(off4.shader.sgv, static_cast<uint8_t>(SgVariant::Staged));
    EXPECT_NE(off4.name().find(" v:staged"), std::string::npos) << off4.name();
  }
  // 16-byte loads: 64x64x16 2x2 has 128 invocations for 64*16/8 = 128 groups; 32x64x8 (8x8x8)
  // would leave each of 64 invocations half a group of A.
  const SgMatShape sh{16, 16, 16, 32};
  EXPECT_EQ(sgmat_variant_problem({64, 64, 16, 2, 2}, sh, SgVariant::Wide), "");
  EXPECT_NE(sgmat_variant_problem({32, 64, 8, 2, 2}, {8, 8, 8, 8}, SgVariant::Wide), "");
  EXPECT_EQ(sgmat_variant_problem({32, 64, 8, 2, 2}, {8, 8, 8, 8}, SgVariant::Staged), "");
  // On such a tile Auto keeps the staged path; a forced Wide is a typed error naming the setting.
  const Adapter lvp = lavapipe_sid();
  const OpCall small = matmul_call(Tensor::empty({64, 64}, DType::F16), Tensor::empty({64, 64}, DType::F16), false,
                                   DType::F16);
  MatmulTuning tu;
  tu.sgmat = {{32, 64, 8, 2, 2}};
  EXPECT_EQ(plan_ok(lvp, small, tu).shader.sgv, static_cast<uint8_t>(SgVariant::Staged));
  tu.sgmat_variant = SgVariant::Wide;
  try {
    plan_matmul(lvp.caps(), tu, small);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("WGT_MATMUL_SGMAT_VARIANT=wide"), std::string::npos) << e.what();
  }
  // The ablation is in the key and loud in the name.
  MatmulTuning abl;
  abl.sgmat_ablate = 2;
  const MatmulPlan pa = plan_ok(ad, nn, abl);
  EXPECT_NE(pa.name().find("ABLATED-2(wrong results)"), std::string::npos) << pa.name();
  EXPECT_FALSE(pa.key() == plan_ok(ad, nn, {}).key());
  for (uint8_t a = 1; a <= 5; ++a) {
    abl.sgmat_ablate = a;
    for (SgVariant v : {SgVariant::Staged, SgVariant::Wide}) {
      abl.sgmat_variant = v;
      expect_variant_expands(plan_ok(ad, nn, abl).variant(), "ablation " + std::to_string(a));
    }
  }
}

// WGT_MATMUL_SGMAT_VARIANT's words map onto SgVariant in order, WGT_MATMUL_SGMAT_ABLATE onto
// the ablation level.
TEST(MatmulPlan, SubgroupMatrixDataPathFromSettings) {
  const std::pair<const char*, SgVariant> words[] = {
      {"auto", SgVariant::Auto}, {"staged", SgVariant::Staged}, {"wide", SgVariant::Wide}};
  for (const auto& [w, v] : words) {
    test_setenv("WGT_MATMUL_SGMAT_VARIANT", w);
    test_setenv("WGT_MATMUL_SGMAT_ABLATE", "3");
    settings_reload();
    const KernelTuning t = kernel_tuning_from_settings();
    EXPECT_EQ(t.matmul.sgmat_variant, v) << w;
    EXPECT_EQ(t.matmul.sgmat_ablate, 3) << w;
  }
  test_unsetenv("WGT_MATMUL_SGMAT_VARIANT");
  test_unsetenv("WGT_MATMUL_SGMAT_ABLATE");
  settings_reload();
  EXPECT_EQ(kernel_tuning_from_settings().matmul.sgmat_variant, SgVariant::Auto);
  EXPECT_EQ(kernel_tuning_from_settings().matmul.sgmat_ablate, 0);
}

TEST(MatmulPlan, SubgroupMatrixKernelOnlyWhereItRuns) {
  const Adapter ad = tensor_core_gpu();
  auto kernel = [](const Adapter& a, const OpCall& c, const MatmulTuning& tu = {}) {
    return plan_ok(a, c, tu).shader.kernel;
  };
  const Tensor a16 = Tensor::empty({64, 128}, DType::F16), b16 = Tensor::empty({128, 96}, DType::F16);
  // No feature, no f16 config, a subgroup size that varies, f32 operands, packed f16, off.
  EXPECT_EQ(kernel(big_gpu(), matmul_call(a16, b16, false, DType::F16)), MatmulKernel::Tiled);
  Adapter ints = ad;
  ints.f.subgroup_matrix_configs = {{6, 4, 16, 16, 32}, {2, 2, 16, 8, 8}};
  EXPECT_EQ(kernel(ints, matmul_call(a16, b16, false, DType::F16)), MatmulKernel::Tiled);
  Adapter varying = ad;
  varying.l.subgroup_min_size = 16;
  EXPECT_EQ(kernel(varying, matmul_call(a16, b16, false, DType::F16)), MatmulKernel::Tiled);
  EXPECT_EQ(kernel(ad, matmul_call(Tensor::empty({64, 128}, DType::F32), Tensor::empty({128, 96}, DType::F32), false)),
            MatmulKernel::Tiled);
  MatmulTuning packed;
  packed.f16 = F16Store::Packed;
  EXPECT_EQ(kernel(ad, matmul_call(a16, b16, false, DType::F16), packed), MatmulKernel::Tiled);
  MatmulTuning off;
  off.sgmat_off = true;
  EXPECT_EQ(kernel(ad, matmul_call(a16, b16, false, DType::F16), off), MatmulKernel::Tiled);
  // Unaligned vec4 loads: K % 4, N % 4 with N-contiguous B, an A view with an odd offset,
  // a K-strided (transposed) A.
  EXPECT_EQ(kernel(ad, matmul_call(Tensor::empty({64, 126}, DType::F16), Tensor::empty({126, 96}, DType::F16), false,
                                   DType::F16)),
            MatmulKernel::Tiled);
  EXPECT_EQ(kernel(ad, matmul_call(a16, Tensor::empty({128, 94}, DType::F16), false, DType::F16)), MatmulKernel::Tiled);
  const Tensor wide = Tensor::empty({64, 129}, DType::F16);
  EXPECT_EQ(kernel(ad, matmul_call(wide.slice(1, 1, 129), b16, false, DType::F16)), MatmulKernel::Tiled);
  EXPECT_EQ(kernel(ad, matmul_call(Tensor::empty({128, 64}, DType::F16).t(), b16, false, DType::F16)),
            MatmulKernel::Tiled);
  // Neither default tile fits 16 KiB of workgroup memory: the tiled kernel.
  Adapter small_smem = ad;
  small_smem.l.max_compute_workgroup_storage_size = 16384;
  EXPECT_EQ(kernel(small_smem, matmul_call(a16, b16, false, DType::F16)), MatmulKernel::Tiled);
  // Small M stays with the gemvs.
  EXPECT_EQ(kernel(ad, matmul_call(Tensor::empty({1, 128}, DType::F16), Tensor::empty({96, 128}, DType::F16), true,
                                   DType::F16)),
            MatmulKernel::GemvVec);
  // A tile the device cannot hold is a typed error naming the setting.
  MatmulTuning big;
  big.sgmat = {{256, 256, 64, 4, 4}};
  try {
    plan_matmul(ad.caps(), big, matmul_call(a16, b16, false, DType::F16));
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("WGT_MATMUL_SGMAT"), std::string::npos) << e.what();
  }
}
