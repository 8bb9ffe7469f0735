// A handle of one backend of the runtime: the CPU, or one WebGPU adapter's device. Cheap to
// copy; copies name the same backend and share its runtime identity. Tensors still name
// their device with wgt::Device (Device::webgpu(i) is the backend of BackendHandle::webgpu(i)).
#pragma once
#include <cstdint>
#include <string>

#include "wgt/device.hpp"
#include "wgt/tensor.hpp"

namespace wgt {

class BackendHandle {
 public:
  // The backend of the WebGPU adapter `ordinal`, in the order of webgpu_adapters()
  // (high-performance first). ErrorKind::BackendInit when Dawn, a real adapter, that
  // ordinal or its device is unavailable, with the reason.
  static BackendHandle webgpu(int ordinal);
  // The default adapter's backend (ordinal 0).
  static BackendHandle webgpu_default() { return webgpu(0); }
  // The backend whose Dawn instance and device are these handles (WGPUInstance, WGPUDevice
  // passed as opaque pointers), for code that shares the device with wgtensor: one of
  // wgtensor's own (the handles native_instance() / native_device() return), or a device the
  // caller created with the Dawn library wgtensor loaded, on an instance with TimedWaitAny.
  // Such a device is adopted once (a later call returns the same backend) as a new
  // Device::webgpu(i): wgtensor takes its own references to the instance and device, reads
  // the features and limits the device was created with, and never destroys it; its lost /
  // uncaptured-error callbacks stay the caller's. BackendInit when Dawn cannot be loaded.
  static BackendHandle from_dawn(void* wgpu_instance, void* wgpu_device);
  // The CPU backend of the runtime's CPU mode.
  static BackendHandle cpu();

  Device device() const { return device_; }
  std::string name() const;  // "cpu", "webgpu:0", ...
  // Opaque identity of the backend in this runtime: equal for copies and for handles made
  // for the same backend, different between backends (device buffers carry it).
  uint64_t runtime_id() const { return id_; }
  // Waits until every op so far has run on this backend.
  void synchronize() const;
  // A copy of t on this backend (counted as an upload in the runtime's stats when it moves).
  Tensor upload(const Tensor& t) const;
  // A copy of t (of this backend) on the host.
  Tensor download(const Tensor& t) const;
  // The Dawn handles (WGPUInstance, WGPUDevice) of a WebGPU backend; nullptr for the CPU.
  void* native_instance() const;
  void* native_device() const;

  bool operator==(const BackendHandle& o) const { return id_ == o.id_ && device_ == o.device_; }

 private:
  BackendHandle(Device d, uint64_t id) : device_(d), id_(id) {}
  Device device_;
  uint64_t id_;
};

}  // namespace wgt
