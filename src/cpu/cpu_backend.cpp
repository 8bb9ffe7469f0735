// The two CPU backends share capability rules; the fast one tries its kernels first.
#include "cpu/cpu_backend.hpp"

#include "cpu/fast/fast.hpp"
#include "cpu/reference/reference.hpp"

namespace wgt {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuMode mode) : mode_(mode) {}
  std::string name() const override { return mode_ == CpuMode::Reference ? "cpu-reference" : "cpu-fast"; }
  Device device() const override { return Device::cpu(); }
  Support supports(const OpCall& call) const override { return cpu_ref::supports(call); }
  void execute(OpCall& call) override {
    if (mode_ == CpuMode::Fast && cpu_fast::try_execute(call)) return;
    cpu_ref::execute(call);
  }

 private:
  CpuMode mode_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(CpuMode mode) { return std::make_unique<CpuBackend>(mode); }

}  // namespace wgt
