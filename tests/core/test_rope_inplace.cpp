// rope_ (in-place RoPE) on the CPU reference: equal to rope() for both layouts, offsets,
// explicit positions, f32/f16, batches and strided views (head slices of a fused QKV tensor,
// transposed heads) whose other elements stay untouched; empty dims; typed errors that leave
// x unchanged.
#include <cmath>

#include "core/ref_test_util.hpp"
#include "wgt/nn.hpp"

namespace wgt::test {
namespace {

class RopeInplaceTest : public RefTest {};

Tensor randn(const Shape& s, uint64_t seed, DType dt = DType::F32) { return rand_normal(s, seed, 0.0, 1.0, dt); }

// Both tensors' logical values, element for element (shapes must match).
void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape())) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  auto g = vals(got), w = vals(want);
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], w[i]) << what << " [" << i << "]";
}

std::vector<RopeConfig> configs() {
  std::vector<RopeConfig> out;
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    RopeConfig full;
    full.style = style;
    out.push_back(full);
    RopeConfig partial = full;  // n_rot/2 odd, custom base, position scaling
    partial.n_rot = 6;
    partial.base = 500.0;
    partial.freq_scale = 0.25;
    out.push_back(partial);
  }
  return out;
}

TEST_F(RopeInplaceTest, EqualsRopeForLayoutsOffsetsPositionsAndDtypes) {
  for (DType dt : {DType::F32, DType::F16}) {
    for (const RopeConfig& cfg : configs()) {
      const std::string tag = std::string(dtype_name(dt)) + (cfg.style == RopeStyle::Neox ? " neox" : " normal") +
                              " n_rot " + std::to_string(cfg.n_rot);
      for (const Shape& shape : {Shape{5, 3, 10}, Shape{2, 3, 4, 10}}) {  // odd seq; a batch
        const Tensor x = randn(shape, 11, dt);
        Tensor y = x.clone();
        rope_(y, 7, cfg);
        expect_same(y, rope(x, 7, cfg), tag + " offset");
        const int64_t seq = shape[shape.size() - 3];
        for (DType pt : {DType::I32, DType::I64}) {
          Tensor pos = cast(Tensor::from_vector(std::vector<int32_t>{9, 0, 3, 1000, 2}, {5}).slice(0, 0, seq), pt);
          Tensor z = x.clone();
          rope_(z, pos, cfg);
          expect_same(z, rope(x, pos, cfg), tag + " positions");
        }
      }
    }
  }
}

TEST_F(RopeInplaceTest, HeadSlicesOfFusedQkvRotateOnlyTheirHeads) {
  const int64_t seq = 3, H = 4, Hkv = 2, D = 8;
  for (DType dt : {DType::F32, DType::F16}) {
    const Tensor qkv0 = randn({seq, (H + 2 * Hkv) * D}, 21, dt);
    Tensor qkv = qkv0.clone();
    Tensor heads = qkv.view({seq, H + 2 * Hkv, D});
    Tensor q = heads.slice(1, 0, H), k = heads.slice(1, H, H + Hkv);
    ASSERT_FALSE(q.is_contiguous());
    for (const RopeConfig& cfg : configs()) {
      Tensor before = qkv.clone();
      const Tensor b3 = before.view({seq, H + 2 * Hkv, D});
      rope_(q, 4, cfg);
      rope_(k, 4, cfg);
      expect_same(q, rope(b3.slice(1, 0, H), 4, cfg), "q");
      expect_same(k, rope(b3.slice(1, H, H + Hkv), 4, cfg), "k");
      expect_same(heads.slice(1, H + Hkv, H + 2 * Hkv), b3.slice(1, H + Hkv, H + 2 * Hkv), "v untouched");
    }
  }
}

TEST_F(RopeInplaceTest, TransposedAndBatchedViews) {
  for (const RopeConfig& cfg : configs()) {
    // Heads stored [D, H] per row: head_dim has stride H (no unit stride anywhere).
    Tensor base = randn({3, 10, 2}, 31);
    const Tensor orig = base.clone();
    Tensor x = base.transpose(1, 2);  // [3, 2, 10]
    rope_(x, 2, cfg);
    expect_same(x, rope(orig.transpose(1, 2), 2, cfg), "transposed head_dim");
    // A batch slice with a step: every other batch entry rotates, the rest is untouched.
    Tensor b = randn({4, 3, 2, 10}, 32);
    const Tensor b0 = b.clone();
    Tensor even = b.slice(0, 0, 4, 2);
    rope_(even, 1, cfg);
    expect_same(even, rope(b0.slice(0, 0, 4, 2), 1, cfg), "strided batch");
    expect_same(b.slice(0, 1, 4, 2), b0.slice(0, 1, 4, 2), "odd batch entries untouched");
  }
}

TEST_F(RopeInplaceTest, EmptyAndSizeOneDims) {
  for (const Shape& s : {Shape{0, 2, 4}, Shape{3, 0, 4}, Shape{0, 3, 2, 4}, Shape{1, 1, 2}, Shape{1, 3, 1, 2}}) {
    const Tensor x = randn(s, 41);
    Tensor y = x.clone();
    rope_(y, 3);
    expect_same(y, rope(x, 3), shape_str(s));
  }
  // A size-1 batch slice at an offset: its batch stride is never stepped along.
  Tensor b = randn({2, 1, 2, 4}, 42);
  const Tensor b0 = b.clone();
  Tensor one = b.slice(0, 1, 2);
  rope_(one, 5);
  expect_same(one, rope(b0.slice(0, 1, 2), 5), "size-1 batch slice");
  expect_same(b.slice(0, 0, 1), b0.slice(0, 0, 1), "other entry untouched");
}

TEST_F(RopeInplaceTest, ErrorsAreTypedAndLeaveXUnchanged) {
  Tensor x = randn({4, 2, 8}, 51);
  const Tensor x0 = x.clone();
  Tensor odd = randn({4, 2, 9}, 52);
  EXPECT_WGT_ERROR(rope_(odd, 0), InvalidArgument, "rope_");  // odd head_dim, no n_rot
  RopeConfig bad;
  bad.n_rot = 3;
  EXPECT_WGT_ERROR(rope_(x, 0, bad), InvalidArgument, "rope_");
  bad = {};
  bad.base = -1;
  EXPECT_WGT_ERROR(rope_(x, 0, bad), InvalidArgument, "rope_");
  Tensor flat = randn({4, 8}, 53);
  EXPECT_WGT_ERROR(rope_(flat, 0), RankMismatch, "rope_");
  EXPECT_WGT_ERROR(rope_(x, I64({0, 1, 2}, {3})), ShapeMismatch, "rope_");
  EXPECT_WGT_ERROR(rope_(x, F({0, 1, 2, 3}, {4})), DTypeMismatch, "rope_");
  Tensor ints = I32({1, 2}, {1, 1, 2});
  EXPECT_WGT_ERROR(rope_(ints, 0), DTypeMismatch, "rope_");
  EXPECT_WGT_ERROR(rope_(x, -1), InvalidArgument, "rope_");
  // A broadcast view: one memory element per head would be rotated once per head.
  Tensor bcast = randn({4, 1, 8}, 54).expand({4, 3, 8});
  EXPECT_WGT_ERROR(rope_(bcast, 1), InvalidArgument, "rope_");
  // Positions aliasing x's bytes would be overwritten while being read.
  Tensor alias_pos(x.storage(), {4}, {1}, 0, DType::I32);
  EXPECT_WGT_ERROR(rope_(x, alias_pos), InvalidArgument, "rope_");
  Tensor undefined;
  EXPECT_WGT_ERROR(rope_(undefined, 0), InvalidArgument, "rope_");
  expect_same(x, x0, "x after the failed calls");
}

TEST_F(RopeInplaceTest, CountedAsAnInPlaceCpuCall) {
  Runtime::get().reset_stats();
  Tensor x = randn({2, 2, 4}, 61);
  rope_(x, 1);
  const auto& per_op = Runtime::get().stats().per_op;
  ASSERT_TRUE(per_op.count("rope_"));
  ASSERT_TRUE(per_op.at("rope_").count("cpu-reference"));
  EXPECT_EQ(per_op.at("rope_").at("cpu-reference").calls, 1u);
  EXPECT_EQ(per_op.count("rope"), 0u) << "rope_ must not allocate through the out-of-place op";
}

}  // namespace
}  // namespace wgt::test
