// The runtime as Python sees it: the execution policy, decisions, stats and trace, residency
// (pinning, memory), synchronization, the WebGPU adapters and info().
#include <optional>
#include <sstream>
#include <thread>

#include "common.hpp"
#include "wgt/webgpu_info.hpp"

namespace wgtpy {
namespace {

const char* mode_name(wgt::PolicyMode m) {
  return m == wgt::PolicyMode::Auto ? "auto" : m == wgt::PolicyMode::GpuStrict ? "gpu-strict" : "cpu-only";
}
wgt::PolicyMode to_mode(const std::string& s) {
  if (s == "auto") return wgt::PolicyMode::Auto;
  if (s == "gpu-strict") return wgt::PolicyMode::GpuStrict;
  if (s == "cpu-only") return wgt::PolicyMode::CpuOnly;
  wgt::throw_error(wgt::ErrorKind::InvalidArgument, "Policy", "mode must be 'auto', 'gpu-strict' or 'cpu-only', got '" + s + "'");
}
wgt::CpuMode to_cpu_mode(const std::string& s) {
  if (s == "fast") return wgt::CpuMode::Fast;
  if (s == "reference") return wgt::CpuMode::Reference;
  wgt::throw_error(wgt::ErrorKind::InvalidArgument, "Policy", "cpu_mode must be 'fast' or 'reference', got '" + s + "'");
}

py::dict decision_dict(const wgt::OpDecision& d) {
  py::dict r;
  r["op"] = d.op, r["backend"] = d.backend, r["reason"] = d.reason, r["fallback"] = d.fallback;
  return r;
}

py::dict counters_dict(const wgt::OpCounters& c) {
  py::dict r;
  r["calls"] = c.calls, r["fallbacks"] = c.fallbacks, r["bytes_uploaded"] = c.bytes_uploaded;
  r["bytes_downloaded"] = c.bytes_downloaded, r["evictions"] = c.evictions, r["seconds"] = c.seconds;
  r["last_reason"] = c.last_reason;
  return r;
}

py::dict adapter_dict(const wgt::WebGPUInfo& a) {
  py::dict r;
  r["index"] = a.index, r["name"] = a.name, r["vendor"] = a.vendor, r["architecture"] = a.architecture;
  r["driver"] = a.device_description, r["backend"] = a.backend, r["type"] = a.adapter_type;
  r["features"] = a.features;
  py::dict limits;
  for (const auto& [k, v] : a.limits) limits[py::str(k)] = v;
  r["limits"] = limits;
  r["memory_heap_bytes"] = a.memory_heap_bytes;
  return r;
}

// Runs f (which takes the runtime lock) without the GIL: a thread holding the runtime lock may
// need the GIL to release a NumPy array that a dying tensor borrowed, so the GIL is never held
// while waiting for the runtime lock.
template <typename F>
auto snapshot(F f) {
  py::gil_scoped_release nogil;
  return f();
}

}  // namespace

void init_runtime(py::module_& m) {
  py::class_<wgt::Policy>(m, "Policy",
                          "The execution policy: mode ('auto', 'gpu-strict', 'cpu-only'), cpu_mode ('fast', 'reference'),\n"
                          "allow_fallback (auto: run on the CPU when WebGPU cannot), min_gpu_work (host-input calls below\n"
                          "this estimated work run on the CPU), memory_budget (device bytes; 0 = default), trace (one line\n"
                          "per decision on stderr).")
      .def(py::init<>())
      .def_property("mode", [](const wgt::Policy& p) { return mode_name(p.mode); },
                    [](wgt::Policy& p, const std::string& s) { p.mode = to_mode(s); })
      .def_property("cpu_mode", [](const wgt::Policy& p) { return p.cpu_mode == wgt::CpuMode::Fast ? "fast" : "reference"; },
                    [](wgt::Policy& p, const std::string& s) { p.cpu_mode = to_cpu_mode(s); })
      .def_readwrite("allow_fallback", &wgt::Policy::allow_fallback)
      .def_readwrite("min_gpu_work", &wgt::Policy::min_gpu_work)
      .def_readwrite("memory_budget", &wgt::Policy::memory_budget)
      .def_readwrite("trace", &wgt::Policy::trace)
      .def("__repr__", [](const wgt::Policy& p) {
        std::ostringstream o;
        o << "Policy(mode='" << mode_name(p.mode) << "', cpu_mode='" << (p.cpu_mode == wgt::CpuMode::Fast ? "fast" : "reference")
          << "', allow_fallback=" << (p.allow_fallback ? "True" : "False") << ", min_gpu_work=" << p.min_gpu_work
          << ", memory_budget=" << p.memory_budget << ", trace=" << (p.trace ? "True" : "False") << ")";
        return o.str();
      });
  // The scope of keep_host_ops_on_cpu() (python/wgtensor/__init__.py): C++'s scope is per thread,
  // so it must end on the thread that began it.
  struct HostScope {
    std::optional<wgt::KeepHostOpsOnCpu> scope;
    std::thread::id owner;
  };
  py::class_<HostScope>(m, "_KeepHostOpsOnCpu")
      .def(py::init<>())
      .def("enter", [](HostScope& h) {
        if (h.scope) throw wgt::Error(wgt::ErrorKind::InvalidArgument, "keep_host_ops_on_cpu", "already entered");
        h.scope.emplace();
        h.owner = std::this_thread::get_id();
      })
      .def("exit", [](HostScope& h) {
        if (h.scope && h.owner != std::this_thread::get_id())
          throw wgt::Error(wgt::ErrorKind::InvalidArgument, "keep_host_ops_on_cpu",
                           "the block must end on the thread that began it");
        h.scope.reset();
      });
  m.def("get_policy", [] { return wgt::Runtime::get().policy(); }, release_gil(), "A copy of the current policy.");
  m.def("_set_policy", [](const wgt::Policy& p) { wgt::Runtime::get().set_policy(p); }, release_gil());

  m.def("last_decision", [] { return decision_dict(snapshot([] { return wgt::Runtime::get().last_decision(); })); },
        "The calling thread's latest op: {'op', 'backend', 'reason', 'fallback'}.");
  m.def("stats", [] {
    const wgt::RuntimeStats s = snapshot([] { return wgt::Runtime::get().stats(); });
    py::dict per_op;
    for (const auto& [op, backends] : s.per_op) {
      py::dict b;
      for (const auto& [name, c] : backends) b[py::str(name)] = counters_dict(c);
      per_op[py::str(op)] = b;
    }
    py::dict r;
    r["per_op"] = per_op, r["bytes_uploaded"] = s.bytes_uploaded, r["bytes_downloaded"] = s.bytes_downloaded;
    r["evictions"] = s.evictions, r["fallbacks"] = s.fallbacks;
    return r;
  }, "Counters since the last reset_stats(): per_op[op][backend] = {calls, fallbacks, bytes..., seconds, last_reason},\n"
     "and the totals.");
  m.def("reset_stats", [] { wgt::Runtime::get().reset_stats(); }, release_gil(), "Zeroes the counters and empties the trace log.");
  m.def("_set_record_log", [](bool on) { wgt::Runtime::get().set_record_log(on); }, release_gil());
  m.def("trace_log", [] {
    py::list l;
    for (const auto& d : snapshot([] { return wgt::Runtime::get().trace_log(); })) l.append(decision_dict(d));
    return l;
  }, "The decisions recorded while a trace() block is active (or recording was turned on).");

  m.def("synchronize", &wgt::synchronize, release_gil(), "Waits until every op so far has run on the devices.");
  m.def("pin", &wgt::pin, py::arg("t"), release_gil(), "Pins the tensor's storage on its device (counted; never evicted).");
  m.def("unpin", &wgt::unpin, py::arg("t"), release_gil(), "Undoes one pin(); InvalidArgument when not pinned.");
  m.def("is_resident", [](const Tensor& t) { return wgt::Runtime::get().is_resident(t); }, py::arg("t"), release_gil());
  m.def("memory_stats", [](int device) {
    const wgt::MemoryStats s = snapshot([device] { return wgt::Runtime::get().memory_stats(device); });
    py::dict r;
    r["budget"] = s.budget, r["resident"] = s.resident, r["pinned"] = s.pinned, r["allocated"] = s.allocated;
    r["pooled"] = s.pooled, r["evicted_tensors"] = s.evicted_tensors;
    return r;
  }, py::arg("device") = 0, "Device memory accounting of webgpu:device, in bytes.");

  m.def("version", &wgt::version);
  m.def("webgpu_available", [] { return wgt::webgpu_available(nullptr); }, release_gil());
  m.def("webgpu_unavailable_reason", [] {
    std::string why;
    return wgt::webgpu_available(&why) ? std::string() : why;
  }, release_gil(), "Why WebGPU is unavailable ('' when it is available).");
  m.def("adapters", [] {
    std::vector<wgt::WebGPUInfo> a;
    {
      py::gil_scoped_release g;
      std::string why;
      a = wgt::webgpu_adapters(&why);
    }
    py::list l;
    for (const auto& x : a) l.append(adapter_dict(x));
    return l;
  }, "The WebGPU adapters: name, vendor, backend, features, limits, ...");
  m.def("info", [] {
    std::ostringstream o;
    const wgt::Policy p = snapshot([] { return wgt::Runtime::get().policy(); });
    o << "wgtensor " << wgt::version() << "\n";
    o << "policy: mode=" << mode_name(p.mode) << " cpu_mode=" << (p.cpu_mode == wgt::CpuMode::Fast ? "fast" : "reference")
      << " fallback=" << (p.allow_fallback ? "on" : "off") << " min_gpu_work=" << p.min_gpu_work << "\n";
    std::string why;
    std::vector<wgt::WebGPUInfo> adapters;
    {
      py::gil_scoped_release g;
      adapters = wgt::webgpu_adapters(&why);
    }
    o << "backends: cpu-reference, cpu-fast";
    for (const auto& a : adapters) o << ", webgpu:" << a.index;
    o << "\n";
    if (adapters.empty()) o << "webgpu: unavailable: " << why << "\n";
    for (const auto& a : adapters)
      o << "webgpu:" << a.index << ": " << a.name << " (" << a.backend << ", " << a.adapter_type << ")\n";
    return o.str();
  }, "A summary like `wgt info`: version, policy, backends and WebGPU adapters.");
}

}  // namespace wgtpy
