// BackendHandle without a GPU: the CPU backend's handle, the typed error of a backend that
// cannot be set up, and the error kind's name.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "wgt/wgt.hpp"

namespace wgt {
namespace {

Tensor randn(const Shape& s, uint64_t seed) { return rand_normal(s, seed, 0.0, 1.0); }

TEST(BackendHandle, CpuHandle) {
  const BackendHandle c = BackendHandle::cpu(), copy = c;
  EXPECT_TRUE(c.device().is_cpu());
  EXPECT_EQ(c.name(), "cpu");
  EXPECT_EQ(copy.runtime_id(), c.runtime_id());
  EXPECT_TRUE(copy == c);
  EXPECT_EQ(c.native_instance(), nullptr);
  EXPECT_EQ(c.native_device(), nullptr);
  const Tensor x = randn({3, 5}, 7).t();  // a strided view
  const Tensor up = c.upload(x);
  EXPECT_TRUE(up.device().is_cpu());
  EXPECT_EQ(c.download(up).to_vector<float>(), x.contiguous().to_vector<float>());
  c.synchronize();
}

// Whatever the machine has, an ordinal beyond its adapters cannot be set up.
TEST(BackendHandle, AbsentAdapterIsBackendInit) {
  try {
    (void)BackendHandle::webgpu(1 << 20);
    ADD_FAILURE() << "no machine has that many adapters";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BackendInit) << e.what();
    EXPECT_NE(std::string(e.what()).find("BackendInit"), std::string::npos) << e.what();
  }
}

TEST(BackendHandle, ErrorKindsHaveDistinctNames) {
  EXPECT_STREQ(error_kind_name(ErrorKind::BackendInit), "BackendInit");
  std::set<std::string> names;
  for (ErrorKind k : kAllErrorKinds) {
    EXPECT_STRNE(error_kind_name(k), "?");
    names.insert(error_kind_name(k));
  }
  EXPECT_EQ(names.size(), std::size(kAllErrorKinds));
  EXPECT_EQ(static_cast<int>(kAllErrorKinds[std::size(kAllErrorKinds) - 1]), static_cast<int>(ErrorKind::BackendInit));
}

}  // namespace
}  // namespace wgt
