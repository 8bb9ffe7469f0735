// Tensor core: construction, views (reshape/view/permute/slice/select/expand/squeeze/
// unsqueeze), contiguous copies, overflow-checked shapes, host transfers and item().
#include <gtest/gtest.h>

#include "ref_test_util.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using namespace wgt::test;

using TensorCore = RefTest;

TEST(Tensor, FromVectorRoundTrip) {
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from_vector(v, {2, 3});
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.strides(), (Strides{3, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.to_vector<float>(), v);
}

TEST(Tensor, TransposeIsAViewAndContiguousCompacts) {
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor tt = t.t();
  EXPECT_EQ(tt.shape(), (Shape{3, 2}));
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.storage().get(), t.storage().get());
  EXPECT_EQ(tt.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  Tensor c = tt.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.storage().get(), t.storage().get());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST_F(TensorCore, ReshapeAndView) {
  Tensor t = arange(0, 24).view({2, 3, 4});
  Tensor v = t.view({6, -1});
  EXPECT_EQ(v.shape(), (Shape{6, 4}));
  EXPECT_EQ(v.storage().get(), t.storage().get());
  // A transposed tensor cannot be viewed flat, but reshape copies.
  Tensor tr = t.transpose(0, 2);  // [4, 3, 2]
  EXPECT_WGT_ERROR(tr.view({24}), InvalidArgument, "Tensor::view");
  Tensor r = tr.reshape({24});
  EXPECT_NE(r.storage().get(), t.storage().get());
  EXPECT_EQ(r.to_vector<float>()[1], 12.0f);  // tr[0][0][1] = t[1][0][0]
  // Splitting a contiguous dim of a non-contiguous tensor stays a view.
  Tensor sv = tr.view({2, 2, 3, 2});
  EXPECT_EQ(sv.storage().get(), t.storage().get());
  EXPECT_EQ(sv.contiguous().to_vector<float>(), tr.contiguous().to_vector<float>());
  EXPECT_WGT_ERROR(t.view({5, -1}), ShapeMismatch, "Tensor::view");
  EXPECT_WGT_ERROR(t.reshape({-1, -1}), InvalidArgument, "Tensor::reshape");
  EXPECT_WGT_ERROR(t.reshape({7, 3}), ShapeMismatch, "Tensor::reshape");
  // A 0-d tensor views as any all-ones shape (and back) without a copy.
  Tensor s = full({}, 5.0);
  Tensor s11 = s.view({1, 1});
  EXPECT_EQ(s11.shape(), (Shape{1, 1}));
  EXPECT_EQ(s11.storage().get(), s.storage().get());
  EXPECT_EQ(s11.view({}).item(), 5.0);
  EXPECT_WGT_ERROR(s.view({2}), ShapeMismatch, "Tensor::view");
}

TEST_F(TensorCore, PermuteSliceSelect) {
  Tensor t = arange(0, 24).view({2, 3, 4});
  Tensor p = t.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Strides{1, 12, 4}));
  EXPECT_EQ(p.select(0, 3).select(0, 1).to_vector<float>(), (std::vector<float>{15, 19, 23}));
  Tensor s = t.slice(2, 1, 4, 2);  // cols 1, 3
  EXPECT_EQ(s.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(s.select(0, 0).select(0, 0).to_vector<float>(), (std::vector<float>{1, 3}));
  EXPECT_EQ(t.slice(1, -2, 100).shape(), (Shape{2, 2, 4}));  // python-like clamping
  EXPECT_EQ(t.slice(1, 2, 1).shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(t.select(-1, -1).to_vector<float>(), (std::vector<float>{3, 7, 11, 15, 19, 23}));
  EXPECT_WGT_ERROR(t.permute({0, 0, 1}), InvalidArgument, "Tensor::permute");
  EXPECT_WGT_ERROR(t.permute({0, 1}), RankMismatch, "Tensor::permute");
  EXPECT_WGT_ERROR(t.slice(0, 0, 1, -1), InvalidArgument, "Tensor::slice");
  EXPECT_WGT_ERROR(t.select(1, 3), OutOfRange, "Tensor::select");
  EXPECT_WGT_ERROR(t.select(3, 0), OutOfRange, "Tensor::select");
}

TEST_F(TensorCore, ExpandSqueezeUnsqueeze) {
  Tensor c = F({1, 2}, {2, 1});
  Tensor e = c.expand({3, 2, 4});
  EXPECT_EQ(e.strides(), (Strides{0, 1, 0}));
  EXPECT_EQ(e.select(0, 2).to_vector<float>(), (std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(c.expand({-1, 3}).shape(), (Shape{2, 3}));
  EXPECT_WGT_ERROR(c.expand({3, 3}), ShapeMismatch, "Tensor::expand");
  EXPECT_WGT_ERROR(c.expand({2}), RankMismatch, "Tensor::expand");
  Tensor u = c.unsqueeze(0);
  EXPECT_EQ(u.shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(c.unsqueeze(-1).shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(u.squeeze().shape(), (Shape{2}));
  EXPECT_EQ(u.squeeze(0).shape(), (Shape{2, 1}));
  EXPECT_EQ(u.squeeze(1).shape(), (Shape{1, 2, 1}));  // not size 1: unchanged
  EXPECT_EQ(F({5}, {1, 1}).squeeze().dim(), 0);
  EXPECT_WGT_ERROR(c.unsqueeze(4), OutOfRange, "Tensor::unsqueeze");
}

TEST_F(TensorCore, OverflowAndBadShapes) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_WGT_ERROR(Tensor::empty({big, big}, DType::F32), InvalidArgument, "empty");
  EXPECT_WGT_ERROR(zeros({big, big}), InvalidArgument, "full");
  EXPECT_WGT_ERROR(Tensor::empty({-1, 2}, DType::F32), InvalidArgument, "empty");
  EXPECT_WGT_ERROR(Tensor::empty(Shape(9, 1), DType::F32), RankMismatch, "empty");
  EXPECT_WGT_ERROR(rand_uniform({big, big, big}, 1), InvalidArgument, "rand_uniform");
  EXPECT_WGT_ERROR(F({1}, {1}).expand({big, big}), InvalidArgument, "Tensor::expand");
  // A huge but representable allocation fails as OutOfMemory, not as a crash.
  EXPECT_WGT_ERROR(Tensor::empty({int64_t{1} << 55}, DType::F64), OutOfMemory, "allocate");
}

TEST_F(TensorCore, HostTransfersAndItem) {
  std::vector<float> v = {1, 2, 3};
  EXPECT_WGT_ERROR(Tensor::from_host(v.data(), 8, {3}, DType::F32), ShapeMismatch, "from_host");
  EXPECT_WGT_ERROR(Tensor::from_host(nullptr, 12, {3}, DType::F32), InvalidArgument, "from_host");
  Tensor t = Tensor::from_vector(v, {3});
  EXPECT_WGT_ERROR(t.to_vector<double>(), DTypeMismatch, "Tensor::to_vector");
  std::vector<float> dst(2);
  EXPECT_WGT_ERROR(t.copy_to_host(dst.data(), 8), ShapeMismatch, "Tensor::copy_to_host");
  EXPECT_EQ(t.select(0, 2).item(), 3.0);
  EXPECT_EQ(I64({-5}, {1, 1}).item(), -5.0);
  EXPECT_EQ(B({1}, {}).item(), 1.0);
  EXPECT_EQ(cast(F({1.5}, {}), DType::BF16).item(), 1.5);
  std::vector<c64_t> cv = {{2.5f, -1}};
  EXPECT_EQ(Tensor::from_vector(cv, {1}).item(), 2.5);  // real part
  EXPECT_WGT_ERROR(t.item(), ShapeMismatch, "Tensor::item");
  EXPECT_WGT_ERROR(Tensor().item(), InvalidArgument, "Tensor::item");
  Tensor cl = t.clone();
  EXPECT_NE(cl.storage().get(), t.storage().get());
  EXPECT_EQ(cl.to_vector<float>(), v);
  EXPECT_EQ(t.to(Device::cpu()).storage().get(), t.storage().get());
}
