// Helpers for the core op tests: run every op on the CPU reference backend, build tensors
// from literals, read any dtype back as doubles, and assert typed errors.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "wgt/wgt.hpp"

namespace wgt::test {

// Fixture: cpu-only policy with the reference kernels, restored afterwards.
class RefTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = Runtime::get().policy();
    Policy p = saved_;
    p.mode = PolicyMode::CpuOnly;
    p.cpu_mode = CpuMode::Reference;
    Runtime::get().set_policy(p);
  }
  void TearDown() override { Runtime::get().set_policy(saved_); }

 private:
  Policy saved_;
};

inline Tensor F(std::vector<float> v, Shape s) { return Tensor::from_vector(v, s); }
inline Tensor D(std::vector<double> v, Shape s) { return Tensor::from_vector(v, s); }
inline Tensor I32(std::vector<int32_t> v, Shape s) { return Tensor::from_vector(v, s); }
inline Tensor I64(std::vector<int64_t> v, Shape s) { return Tensor::from_vector(v, s); }
inline Tensor U8(std::vector<uint8_t> v, Shape s) { return Tensor::from_vector(v, s); }
inline Tensor B(std::vector<uint8_t> v, Shape s) { return Tensor::from_host(v.data(), v.size(), s, DType::Bool); }

// Logical values of any real tensor as doubles (through a cast to f64 on the reference).
inline std::vector<double> vals(const Tensor& t) { return cast(t, DType::F64).to_vector<double>(); }

inline void expect_near_vec(const std::vector<double>& got, const std::vector<double>& want, double tol,
                            const char* what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "] got " << got[i];
    } else {
      if (std::isinf(want[i])) EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
      else EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << what << " [" << i << "]";
    }
  }
}

// Runs f with the policy's CPU mode set to m (reference or fast), then restores the mode.
template <typename Fn>
auto in_mode(CpuMode m, Fn&& f) {
  Policy p = Runtime::get().policy();
  const CpuMode saved = p.cpu_mode;
  p.cpu_mode = m;
  Runtime::get().set_policy(p);
  auto r = f();
  p.cpu_mode = saved;
  Runtime::get().set_policy(p);
  return r;
}

}  // namespace wgt::test

// Asserts that `stmt` throws wgt::Error of `kind` whose op() contains `opname`.
#define EXPECT_WGT_ERROR(stmt, ekind, opname)                                                     \
  do {                                                                                           \
    try {                                                                                        \
      (void)(stmt);                                                                              \
      ADD_FAILURE() << #stmt " did not throw";                                                   \
    } catch (const ::wgt::Error& e_) {                                                           \
      EXPECT_EQ(::wgt::error_kind_name(e_.kind()), std::string(::wgt::error_kind_name(::wgt::ErrorKind::ekind))) \
          << e_.what();                                                                          \
      EXPECT_NE(e_.op().find(opname), std::string::npos) << "op '" << e_.op() << "' should name " << opname; \
      EXPECT_NE(std::string(e_.what()).find(opname), std::string::npos);                         \
    }                                                                                            \
  } while (0)
