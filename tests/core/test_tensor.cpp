// Tensor core: construction, views, contiguous copies.
#include <gtest/gtest.h>

#include "wgt/wgt.hpp"

using namespace wgt;

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
