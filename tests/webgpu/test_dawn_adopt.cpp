// BackendHandle::from_dawn adopting a device wgtensor did not create: the caller makes an
// instance, an adapter and a device through the loaded Dawn API (as src/webgpu/device.cpp
// does), hands them over, runs ops on the adopted backend against the CPU reference, and keeps
// a device that outlives the backend: the backend releases its own references only.
#include <gtest/gtest.h>

#include <vector>

#include "webgpu/dawn_loader.hpp"
#include "webgpu/device.hpp"
#include "webgpu/webgpu_backend.hpp"
#include "webgpu_test.hpp"
#include "wgt/backend_handle.hpp"

namespace wgt::testing {
namespace {

using namespace webgpu::api;
using WDevice = webgpu::api::Device;  // wgt::Device is the tensor-device name

// What the device-lost callback saw (the caller's callback: wgtensor cannot install its own).
struct LostLog {
  int calls = 0;
  DeviceLostReason reason = DeviceLostReason::Unknown;
};

// An instance (with TimedWaitAny), the default high-performance adapter and a device on it
// with default limits and no optional feature, made by "the caller".
struct CallerDevice {
  const webgpu::Procs* p = nullptr;
  Instance instance = nullptr;
  Adapter adapter = nullptr;
  WDevice device = nullptr;
  LostLog lost;

  void make() {
    std::string why;
    p = webgpu::dawn_procs(&why);
    ASSERT_NE(p, nullptr) << why;
    static const uint32_t kFeatures[] = {instance_feature::TimedWaitAny};
    InstanceDescriptor desc25;
    desc25.capabilities.timed_wait_any_enable = 1;
    InstanceDescriptor2026 desc26;
    desc26.required_feature_count = 1;
    desc26.required_features = kFeatures;
    instance = p->abi->instance_required_features ? p->CreateInstance(&desc26) : p->CreateInstance(&desc25);
    ASSERT_NE(instance, nullptr);
    RequestAdapterOptions opts;
    opts.power_preference = PowerPreference::HighPerformance;
    RequestAdapterCallbackInfo acb;
    acb.callback = [](uint32_t status, Adapter a, StringView, void* u1, void*) {
      if (status == static_cast<uint32_t>(RequestStatus::Success)) *static_cast<Adapter*>(u1) = a;
    };
    acb.userdata1 = &adapter;
    webgpu::wait_future(*p, instance, p->InstanceRequestAdapter(instance, &opts, acb), "test: request adapter");
    ASSERT_NE(adapter, nullptr);
    DeviceDescriptor dd;
    dd.label = {"caller", kStrlen};
    dd.device_lost.callback = [](const WDevice*, DeviceLostReason r, StringView, void* u1, void*) {
      auto* log = static_cast<LostLog*>(u1);
      ++log->calls;
      log->reason = r;
    };
    dd.device_lost.userdata1 = &lost;
    RequestDeviceCallbackInfo dcb;
    dcb.callback = [](uint32_t status, WDevice d, StringView, void* u1, void*) {
      if (status == static_cast<uint32_t>(RequestStatus::Success)) *static_cast<WDevice*>(u1) = d;
    };
    dcb.userdata1 = &device;
    webgpu::wait_future(*p, instance, p->AdapterRequestDevice(adapter, &dd, dcb), "test: request device");
    ASSERT_NE(device, nullptr);
  }

  // The device still works for its owner: a buffer made in an error scope raises no error.
  void expect_usable() const {
    p->DevicePushErrorScope(device, ErrorFilter::Validation);
    BufferDescriptor bd;
    bd.usage = usage::Storage | usage::CopyDst;
    bd.size = 256;
    Buffer b = p->DeviceCreateBuffer(device, &bd);
    struct R {
      ErrorType type = ErrorType::Unknown;
    } r;
    PopErrorScopeCallbackInfo cb;
    cb.callback = [](uint32_t, ErrorType type, StringView, void* u1, void*) { static_cast<R*>(u1)->type = type; };
    cb.userdata1 = &r;
    webgpu::wait_future(*p, instance, p->DevicePopErrorScope(device, cb), "test: pop error scope");
    EXPECT_EQ(r.type, ErrorType::NoError);
    EXPECT_NE(b, nullptr);
    if (b) p->BufferRelease(b);
  }

  // The caller's own teardown: its device is destroyed here, and only here.
  void release() {
    if (device) {
      p->DeviceDestroy(device);
      p->DeviceRelease(device);
    }
    if (adapter) p->AdapterRelease(adapter);
    if (instance) {
      p->InstanceProcessEvents(instance);
      p->InstanceRelease(instance);
    }
  }
};

class WebGpuDawnAdopt : public WebGpuTest {};

std::vector<float> host(const Tensor& t) { return t.to(wgt::Device::cpu()).to_vector<float>(); }

TEST_F(WebGpuDawnAdopt, ForeignDeviceRunsOpsLikeTheReference) {
  static CallerDevice caller;  // the adopted backend stays registered for the process: so does its device
  if (!caller.device) {
    caller.make();
    ASSERT_NE(caller.device, nullptr);
  }
  const BackendHandle h = BackendHandle::from_dawn(caller.instance, caller.device);
  EXPECT_NE(h.device(), BackendHandle::webgpu(0).device());
  EXPECT_NE(h.runtime_id(), BackendHandle::webgpu(0).runtime_id());
  EXPECT_EQ(h.native_device(), static_cast<void*>(caller.device));
  EXPECT_EQ(h.native_instance(), static_cast<void*>(caller.instance));
  EXPECT_TRUE(BackendHandle::from_dawn(caller.instance, caller.device) == h) << "adopted once";

  const Tensor a = rand_uniform({7, 13}, 31, -1.0, 1.0), b = rand_uniform({13, 5}, 32, -1.0, 1.0);
  const Tensor c = rand_uniform({7, 13}, 33, -1.0, 1.0);
  use_gpu();
  const Tensor ga = h.upload(a), gb = h.upload(b), gc = h.upload(c);
  const Tensor mm = matmul(ga, gb);
  EXPECT_EQ(Runtime::get().last_decision().backend, h.name());
  const Tensor sum_ = add(ga, gc.t().t());
  const Tensor sm = softmax(ga, -1);
  h.synchronize();
  use_cpu_reference();
  const std::vector<float> want_mm = matmul(a, b).to_vector<float>(), got_mm = host(mm);
  const std::vector<float> want_add = add(a, c).to_vector<float>(), got_add = host(sum_);
  const std::vector<float> want_sm = softmax(a, -1).to_vector<float>(), got_sm = host(sm);
  ASSERT_EQ(got_mm.size(), want_mm.size());
  for (size_t i = 0; i < got_mm.size(); ++i) EXPECT_NEAR(got_mm[i], want_mm[i], 1e-5) << "matmul " << i;
  ASSERT_EQ(got_add.size(), want_add.size());
  for (size_t i = 0; i < got_add.size(); ++i) EXPECT_EQ(got_add[i], want_add[i]) << "add " << i;
  ASSERT_EQ(got_sm.size(), want_sm.size());
  for (size_t i = 0; i < got_sm.size(); ++i) EXPECT_NEAR(got_sm[i], want_sm[i], 1e-6) << "softmax " << i;
  // The caller's device is as it was: not lost, still usable.
  EXPECT_EQ(caller.lost.calls, 0);
  caller.expect_usable();
}

// A backend over an adopted device, destroyed before its owner is done with the device: the
// device is neither destroyed nor released by it (the owner's buffer creation still works,
// the lost callback has not fired), and the owner's own destroy is the one that fires it.
TEST_F(WebGpuDawnAdopt, BackendReleasesOnlyItsOwnReferences) {
  CallerDevice caller;
  caller.make();
  ASSERT_NE(caller.device, nullptr);
  {
    auto dev = std::make_unique<webgpu::DawnDevice>(*caller.p, caller.instance, caller.device);
    EXPECT_TRUE(dev->adopted());
    EXPECT_GT(dev->limits().max_storage_buffer_binding_size, 0u);  // queried from the device
    EXPECT_FALSE(dev->desc().name.empty());                         // and its adapter
    webgpu::WebGPUBackend backend(std::move(dev), 99);
    const std::vector<float> data = {1.f, -2.f, 3.5f, 4.f};
    auto buf = backend.allocate(sizeof(float) * data.size());
    backend.write(*buf, 0, data.data(), sizeof(float) * data.size());
    std::vector<float> back(data.size());
    backend.read(*buf, 0, back.data(), sizeof(float) * back.size());
    EXPECT_EQ(back, data);
    buf.reset();
  }
  caller.p->InstanceProcessEvents(caller.instance);
  EXPECT_EQ(caller.lost.calls, 0) << "the backend destroyed the caller's device";
  caller.expect_usable();
  caller.release();
  EXPECT_EQ(caller.lost.calls, 1);
  EXPECT_EQ(caller.lost.reason, DeviceLostReason::Destroyed);
}

}  // namespace
}  // namespace wgt::testing
