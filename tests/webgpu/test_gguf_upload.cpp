// Tensors mapped from a GGUF file go to the device straight from the mapping: the upload reads
// the file's bytes in place (no host staging copy) and then lets go of the mapping.
#include <gtest/gtest.h>

#include "webgpu_test.hpp"
#include "wgt/gguf.hpp"
#include "wgt/wgt.hpp"

namespace wgt::testing {
namespace {

class GgufUpload : public WebGpuTest {};

TEST_F(GgufUpload, MappedTensorsUploadAndReleaseTheMapping) {
  use_gpu();
  std::vector<float> v(3 * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 17) * 0.125f - 1.f;
  const Tensor w32 = Tensor::from_vector(v, {3, 64});
  GgufWriter w;
  w.add_tensor("dense", w32);
  w.add_tensor("q", quantize(w32, QType::Q8_0));
  const GgufFile f = GgufFile::from_memory(w.to_bytes());

  const Tensor host = f.tensor("dense");
  ASSERT_TRUE(host.storage()->host_borrowed());
  const long before = host.storage().use_count();
  const uint64_t up0 = Runtime::get().stats().bytes_uploaded;
  const Tensor dev = host.to(Device::webgpu(0));
  EXPECT_EQ(Runtime::get().stats().bytes_uploaded - up0, host.nbytes());
  EXPECT_EQ(host.storage().use_count(), before);  // the device storage holds no reference after the upload
  EXPECT_FALSE(dev.storage()->has_host());
  EXPECT_EQ(dev.cpu().to_vector<float>(), v);
  EXPECT_EQ(add(dev, dev).cpu().to_vector<float>(), add(w32, w32).to_vector<float>());

  const QTensor q = f.qtensor("q");
  const QTensor qd = q.to(Device::webgpu(0));
  EXPECT_EQ(dequantize(qd).cpu().to_vector<float>(), dequantize(q).to_vector<float>());
}

}  // namespace
}  // namespace wgt::testing
