// BackendHandle: a value naming one backend of the runtime's registry.
#include "wgt/backend_handle.hpp"

#include "webgpu/webgpu_factory.hpp"
#include "wgt/runtime.hpp"

namespace wgt {

namespace {
// The CPU backends have no device buffers, hence no domain: one fixed identity, which no
// device backend's domain (pid-derived, see webgpu_backend.cpp) takes.
constexpr uint64_t kCpuId = 1;
}  // namespace

BackendHandle BackendHandle::webgpu(int ordinal) {
  std::string why;
  DeviceBackend* b = Runtime::get().webgpu_backend(ordinal, &why);
  if (!b) throw_error(ErrorKind::BackendInit, "BackendHandle::webgpu", "no WebGPU backend " + std::to_string(ordinal) + ": " + why);
  return BackendHandle(b->device(), b->domain());
}

BackendHandle BackendHandle::from_dawn(void* wgpu_instance, void* wgpu_device) {
  const char* op = "BackendHandle::from_dawn";
  if (!wgpu_instance || !wgpu_device) throw_error(ErrorKind::InvalidArgument, op, "the instance and device handles must not be null");
  Runtime& rt = Runtime::get();
  auto lk = rt.lock();
  (void)rt.webgpu_backend(0);  // the adapters are probed at the first lookup
  // One of wgtensor's own devices, or one adopted before: that backend.
  for (DeviceBackend* b : rt.device_backends())
    if (b->native_device() == wgpu_device) {
      if (b->native_instance() != wgpu_instance)
        throw_error(ErrorKind::InvalidArgument, op, "the device belongs to " + b->name() + ", whose instance is another one");
      return BackendHandle(b->device(), b->domain());
    }
  // A device created by the caller: a new backend over it (its own references only).
  DeviceBackend& b =
      rt.add_device_backend([&](int index) { return adopt_webgpu_device(wgpu_instance, wgpu_device, index); });
  return BackendHandle(b.device(), b.domain());
}

BackendHandle BackendHandle::cpu() { return BackendHandle(Device::cpu(), kCpuId); }

std::string BackendHandle::name() const { return device_.str(); }

void BackendHandle::synchronize() const {
  if (device_.is_cpu()) return;  // CPU ops have completed when they return
  Runtime& rt = Runtime::get();
  auto lk = rt.lock();
  rt.device_backend(device_, "BackendHandle::synchronize").synchronize();
}

Tensor BackendHandle::upload(const Tensor& t) const { return t.to(device_); }

Tensor BackendHandle::download(const Tensor& t) const {
  if (t.defined() && t.device() != device_)
    throw_error(ErrorKind::InvalidArgument, "BackendHandle::download",
                "tensor lives on " + t.device().str() + ", not on " + name());
  return t.to(Device::cpu());
}

void* BackendHandle::native_instance() const {
  return device_.is_cpu() ? nullptr : Runtime::get().device_backend(device_, "BackendHandle::native_instance").native_instance();
}
void* BackendHandle::native_device() const {
  return device_.is_cpu() ? nullptr : Runtime::get().device_backend(device_, "BackendHandle::native_device").native_device();
}

}  // namespace wgt
