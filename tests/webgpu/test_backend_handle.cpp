// BackendHandle on a real adapter: creation by ordinal and default, the shared runtime
// identity, transfers through it, synchronize, and the Dawn handles both ways (interop).
#include <cstring>
#include <vector>

#include "webgpu_test.hpp"
#include "wgt/webgpu_info.hpp"

namespace wgt {
namespace {

Tensor randn(const Shape& s, uint64_t seed) { return rand_normal(s, seed, 0.0, 1.0); }

using testing::WebGpuTest;

class WebGpuBackendHandle : public WebGpuTest {};

TEST_F(WebGpuBackendHandle, OrdinalAndDefaultNameOneBackend) {
  const BackendHandle h = BackendHandle::webgpu(0), d = BackendHandle::webgpu_default();
  EXPECT_TRUE(h == d);
  EXPECT_TRUE(h.device() == Device::webgpu(0));
  EXPECT_EQ(h.name(), "webgpu:0");
  const BackendHandle copy = h;
  EXPECT_EQ(copy.runtime_id(), h.runtime_id());
  EXPECT_NE(h.runtime_id(), BackendHandle::cpu().runtime_id());
  EXPECT_FALSE(h == BackendHandle::cpu());
  // The identity is the one the backend's buffers carry: a tensor made through Device::webgpu(0)
  // is of this backend.
  const Tensor t = zeros({3}, DType::F32, Device::webgpu(0));
  ASSERT_TRUE(t.storage()->buffer());
  EXPECT_EQ(t.storage()->buffer()->domain(), h.runtime_id());
}

TEST_F(WebGpuBackendHandle, MissingOrdinalIsBackendInit) {
  const int n = static_cast<int>(webgpu_adapters(nullptr).size());
  for (int bad : {n, n + 5, -1}) {
    try {
      (void)BackendHandle::webgpu(bad);
      ADD_FAILURE() << "ordinal " << bad << " of " << n << " adapters must not give a backend";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BackendInit) << e.what();
      EXPECT_NE(std::string(e.what()).find("not present"), std::string::npos) << e.what();
    }
  }
}

TEST_F(WebGpuBackendHandle, UploadDownloadAndSynchronize) {
  const BackendHandle h = BackendHandle::webgpu_default();
  for (int64_t n : {0, 1, 7, 1001}) {
    SCOPED_TRACE(n);
    const Tensor x = randn({n}, 500 + static_cast<uint64_t>(n));
    const uint64_t up0 = Runtime::get().stats().bytes_uploaded;
    const Tensor dx = h.upload(x);
    EXPECT_TRUE(dx.device() == h.device());
    EXPECT_EQ(Runtime::get().stats().bytes_uploaded - up0, x.nbytes());
    const Tensor y = h.download(mul(dx, dx));  // an op on the backend, then back
    h.synchronize();
    EXPECT_TRUE(y.device().is_cpu());
    const std::vector<float> xv = x.to_vector<float>(), yv = y.to_vector<float>();
    ASSERT_EQ(yv.size(), xv.size());
    for (size_t i = 0; i < xv.size(); ++i) EXPECT_EQ(yv[i], xv[i] * xv[i]) << i;
  }
  // A strided view goes up compacted and comes back equal.
  const Tensor m = randn({5, 6}, 510).t();
  const Tensor back = h.download(h.upload(m));
  EXPECT_EQ(back.to_vector<float>(), m.contiguous().to_vector<float>());
  // Downloading a tensor of another backend is a mistake the handle names.
  try {
    (void)h.download(m);
    ADD_FAILURE() << "a host tensor is not on " << h.name();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
}

TEST_F(WebGpuBackendHandle, DawnHandlesRoundTrip) {
  const BackendHandle h = BackendHandle::webgpu(0);
  void* inst = h.native_instance();
  void* dev = h.native_device();
  ASSERT_NE(inst, nullptr);
  ASSERT_NE(dev, nullptr);
  const BackendHandle again = BackendHandle::from_dawn(inst, dev);
  EXPECT_TRUE(again == h);
  EXPECT_EQ(again.runtime_id(), h.runtime_id());
  // (A device wgtensor did not create is adopted: tests/webgpu/test_dawn_adopt.cpp.)
  int not_a_device = 0;
  try {
    (void)BackendHandle::from_dawn(&not_a_device, dev);
    ADD_FAILURE() << "a device must come with its own instance";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
  }
  EXPECT_THROW((void)BackendHandle::from_dawn(nullptr, dev), Error);
}

}  // namespace
}  // namespace wgt
