// The runtime's host paths for device tensors: an in-place call run by the CPU on host copies
// of the written spans (the host round trip), and reading a strided device view.
#include "runtime/host_spans.hpp"

#include <cstring>
#include <map>

#include "wgt/ops.hpp"

namespace wgt {

std::pair<int64_t, int64_t> element_span(const Tensor& t) {
  int64_t lo = t.offset(), hi = t.offset();
  for (int d = 0; d < t.dim(); ++d) {
    const int64_t span = t.strides()[d] * (t.shape()[d] - 1);
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

Tensor to_host_span(Runtime& rt, const Tensor& t) {
  if (t.numel() == 0) return Tensor::empty(t.shape(), t.dtype());
  const auto [lo, hi] = element_span(t);
  const size_t es = dtype_size(t.dtype());
  auto host = std::make_shared<Storage>(static_cast<size_t>(hi - lo + 1) * es, Device::cpu());
  rt.read_bytes(*t.storage(), static_cast<size_t>(lo) * es, host->host_data(), host->nbytes());
  return Tensor(std::move(host), t.shape(), t.strides(), t.offset() - lo, t.dtype());
}

// The written tensors' storages are read once each over the union of their written spans
// (two written views of one storage then see each other's writes, as on the device), the CPU
// kernel writes host views with the tensors' own strides, and each span goes back whole:
// into the device buffer, or into the host copy of a storage evicted meanwhile. Elements of
// a span outside the views go back unchanged. The caller holds the lock throughout, so no
// other op runs between the read and the write back. The read inputs go through
// to_host_span, read before the kernel writes anything.
std::vector<Tensor> Runtime::run_written_on_host(OpCall& call, Backend& cpu, const std::vector<OutSpec>& outs) {
  struct Span {
    int64_t lo, hi;  // elements
    size_t es;
    std::shared_ptr<Storage> host;
  };
  std::map<Storage*, Span> spans;
  for (size_t i = 0; i < call.inputs.size() && i < 32; ++i) {
    const Tensor& w = call.inputs[i];
    if (!(call.mutates & (1u << i)) || w.numel() == 0) continue;
    const auto [lo, hi] = element_span(w);
    const size_t es = dtype_size(w.dtype());
    auto [it, fresh] = spans.try_emplace(w.storage().get(), Span{lo, hi, es, nullptr});
    if (!fresh && it->second.es != es)
      throw_error(ErrorKind::InvalidArgument, call.name, describe(call) + ": tensors written in place share a storage with different dtypes");
    it->second.lo = std::min(it->second.lo, lo);
    it->second.hi = std::max(it->second.hi, hi);
    w.storage()->touch(++tick_);  // in use by this call: never evicted for its other reads
  }
  for (auto& [st, sp] : spans) {
    sp.host = std::make_shared<Storage>(static_cast<size_t>(sp.hi - sp.lo + 1) * sp.es, Device::cpu());
    read_bytes(*st, static_cast<size_t>(sp.lo) * sp.es, sp.host->host_data(), sp.host->nbytes());
  }
  OpCall hcall = call;
  for (size_t i = 0; i < hcall.inputs.size(); ++i) {
    Tensor& in = hcall.inputs[i];
    if (!in.defined() || in.device().is_cpu()) continue;
    if (i < 32 && (call.mutates & (1u << i)) && in.numel() > 0) {
      const Span& sp = spans.at(in.storage().get());
      in = Tensor(sp.host, in.shape(), in.strides(), in.offset() - sp.lo, in.dtype());
    } else {
      in = to_host_span(*this, in);
    }
  }
  hcall.outputs.clear();
  for (const auto& o : outs) hcall.outputs.push_back(Tensor::empty(o.shape, o.dtype, Device::cpu()));
  cpu.execute(hcall);
  for (auto& [st, sp] : spans)  // into the device buffer, or the host copy of an evicted storage
    write_bytes(*st, static_cast<size_t>(sp.lo) * sp.es, sp.host->host_data(), sp.host->nbytes());
  return hcall.outputs;
}

void Runtime::read_strided(const Tensor& t, void* dst) {
  const size_t es = dtype_size(t.dtype());
  const auto [lo, hi] = element_span(t);
  const size_t extent = static_cast<size_t>(hi - lo + 1) * es;
  // The span is read and gathered on the host when it is not much larger than the view, or
  // when compacting on the device would itself run on the CPU (policy cpu-only), whose input
  // transfer would land back here. Otherwise the view is compacted on its device first and
  // only its bytes are read.
  if (extent <= 4 * t.nbytes() + (size_t{1} << 20) || policy().mode == PolicyMode::CpuOnly) {
    const Tensor host = to_host_span(*this, t);
    host.copy_to_host(dst, t.nbytes());
    return;
  }
  const Tensor c = t.contiguous();
  read_bytes(*c.storage(), static_cast<size_t>(c.offset()) * es, dst, t.nbytes());
}

}  // namespace wgt
