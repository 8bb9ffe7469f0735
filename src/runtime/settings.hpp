// The WGT_* environment variables: one table (name, form, default, doc), one strict parser,
// and the values read once into typed Settings that every reader (runtime, CPU pool, Dawn
// loader, WebGPU device and kernel launchers) takes from here instead of calling getenv.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wgt/runtime.hpp"

namespace wgt {

// A parsed Dims value: `off`, or the numbers.
struct DimsSetting {
  bool off = false;
  std::vector<uint32_t> v;
};
std::string to_string(const DimsSetting& d);  // as it was written: "off" or e.g. "64x64x8x4x4"

struct Settings;
struct SettingValue;

// What a variable accepts. Every kind takes the whole string (no sign, spaces, trailing
// characters, fractions, exponents, NaN or inf where they make no sense); an empty value is
// the same as an unset one.
enum class SettingKind {
  Choice,    // one word of `choices`
  Flag,      // 0 or 1
  Count,     // whole number in [lo, hi]; a power of two too when `pow2`
  Bytes,     // whole number of bytes in [lo, hi]
  Path,      // any non-empty text
  Dims,      // lo to hi whole numbers in [1, 65536] joined by 'x', or `off` when choices say so
};

struct SettingInfo {
  const char* name;
  SettingKind kind;
  const char* form;  // the accepted form, as error messages and the README state it
  const char* dflt;  // the default, in words
  const char* doc;   // one line
  uint64_t lo = 0, hi = 0;  // Count, Bytes: the range; Dims: how many numbers
  bool pow2 = false;        // Count: powers of two only
  std::vector<const char*> choices = {};  // Choice: the words; Dims: {"off"} when it may be off
  // Stores a good value into its field, or records the error there (`error` non-empty).
  void (*store)(Settings&, const SettingValue&, const std::string& error) = nullptr;
};

// A parsed value: the number (Count, Bytes; Flag 0/1), the word (Choice), the text (Path),
// the numbers (Dims).
struct SettingValue {
  uint64_t num = 0;
  const char* word = nullptr;
  std::string text;
  DimsSetting dims;
};

// Every variable the library reads (README.md "Tuning and observing" lists the same ones).
std::span<const SettingInfo> setting_table();

// One variable's value, or the error its text gave. Reading a bad one throws that error
// (InvalidArgument naming the variable and its form), so a reader sees exactly its own
// variable's problem: after settings_reload() a bad kernel knob fails the launches that read
// it, not the unrelated waits and uploads before them.
[[noreturn]] void throw_setting_error(const std::string& message);
template <class T>
class Setting {
 public:
  Setting() = default;
  Setting(T v) : v_(std::move(v)) {}  // NOLINT: defaults read as plain values
  Setting& operator=(T v) {
    v_ = std::move(v);
    return *this;
  }
  const T& operator*() const {
    if (!error.empty()) throw_setting_error(error);
    return v_;
  }
  const T* operator->() const { return &**this; }
  std::string error;  // empty: the value is good

 private:
  T v_{};
};
// The values; an empty optional is an unset variable (the reader's default applies, which
// may depend on the adapter). Checks that need the adapter (a tile that fits its limits, a
// split that divides the warps) stay with the readers.
struct Settings {
  // runtime policy (Runtime construction, policy_from_env)
  Setting<std::optional<PolicyMode>> policy;
  Setting<std::optional<CpuMode>> cpu_mode;
  Setting<std::optional<bool>> fallback, trace;
  Setting<std::optional<uint64_t>> min_gpu_work, memory_budget;
  // host side
  Setting<std::optional<uint32_t>> num_threads;
  Setting<uint64_t> host_cache_bytes = uint64_t{1} << 30;
  Setting<bool> host_profile = false;
  // WebGPU runtime
  Setting<std::optional<std::string>> dawn, dawn_path;
  Setting<std::optional<uint32_t>> webgpu_adapter;
  Setting<bool> webgpu_validate = false, webgpu_disable_f16 = false, webgpu_disable_packed_dot = false;
  Setting<bool> webgpu_profile = false;
  Setting<uint64_t> webgpu_timeout_ms = uint64_t{60000};
  Setting<uint64_t> webgpu_pool_limit = uint64_t{2} << 30;
  Setting<uint32_t> webgpu_batch = 256u;
  Setting<uint32_t> webgpu_early = 8u;
  Setting<std::optional<bool>> webgpu_bind_cache;
  // kernel choices and tuning (the launchers' own, or via webgpu/plans/tuning.hpp)
  Setting<bool> matmul_f16_acc = false;
  Setting<std::optional<DimsSetting>> matmul_tile, matmul_sgmat, matmul_gemv, matmul_gemv_vec;
  Setting<bool> matmul_subgroups = true, matmul_vec = true;
  Setting<uint32_t> matmul_sgmat_variant = 0u;  // WGT_MATMUL_SGMAT_VARIANT: index of its choices (0 auto)
  Setting<uint32_t> matmul_sgmat_ablate = 0u;   // WGT_MATMUL_SGMAT_ABLATE (diagnosis: wrong results)
  enum class F16Store { Auto, Native, Packed };
  Setting<F16Store> matmul_f16 = F16Store::Auto;
  Setting<bool> reduce_subgroups = true;
  enum class FftKernel { Auto, Local, Stockham };
  Setting<FftKernel> fft_kernel = FftKernel::Auto;
  Setting<std::optional<uint32_t>> fft_row;  // WGT_FFT_ROW: the four-step row length
  enum class FftExchange { Complex, Split };
  Setting<FftExchange> fft_exchange = FftExchange::Split;  // WGT_FFT_EXCHANGE
  Setting<std::optional<uint32_t>> fft_radix;  // WGT_FFT_RADIX: the Stockham kernel's points per invocation
  // WGT_SPARSE_SCHEDULE: a wgt::SparseSchedule value forced on every sparse op; unset = auto
  Setting<std::optional<uint8_t>> sparse_schedule;
  Setting<std::optional<uint32_t>> sparse_lane_entries;  // WGT_SPARSE_LANE_ENTRIES (unset: kLaneEntries)
  Setting<bool> attn_prefill_scalar = false;  // WGT_ATTN_PREFILL=sg (the default) or scalar
  Setting<std::optional<DimsSetting>> attn_prefill_sg;
  Setting<bool> attn_decode_split = false;  // WGT_ATTN_DECODE_KERNEL=split
  Setting<bool> attn_decode_direct = true;  // WGT_ATTN_DECODE_DIRECT
  Setting<std::optional<uint32_t>> attn_decode_warps, attn_decode_lanes, attn_decode_unroll, attn_decode_chunk;
  Setting<bool> qmatvec_subgroups = true;
  Setting<std::optional<DimsSetting>> qmatmul_sgmat;
  Setting<const char*> qmatvec_kernel = nullptr;  // one of WGT_QMATVEC_KERNEL's choices; null = default
  Setting<std::optional<uint32_t>> qmatvec_rows, qmatvec_unroll, qmatvec_warps, qmatvec_ksplit, qmatvec_wave;
};

// Parses every variable of the table through `lookup` (null or "" = unset). Strict: throws
// ErrorKind::InvalidArgument naming the first bad variable and its accepted form; otherwise
// each bad variable's error is kept in its Setting.
Settings parse_settings(const std::function<const char*(const char*)>& lookup, bool strict = true);
// parse_settings over the process environment, uncached: for code that runs before main (the
// Dawn engine's re-exec check), where the cached settings() must not be fixed yet.
Settings parse_environment_settings(bool strict);

// The process's settings, parsed from the environment on the first call (the Runtime's
// construction makes that the first use of the library), strictly: any bad variable is an
// error there. Cached; a call costs one atomic load.
const Settings& settings();

// A variable the library reads but does not own (HOME, XDG_CACHE_HOME, OPENBLAS_NUM_THREADS):
// its value, or nullptr when unset or empty. The one getenv outside the table's parser, so
// that no other file reads the environment; a WGT_* name is an InvalidArgument (those go
// through settings()).
const char* foreign_env(const char* name);

// Makes the next settings() call parse the environment again, for tests and benchmarks
// that change WGT_* variables between calls. What was read at construction (policy, thread
// pool, devices) keeps its value; the kernel launchers and waits see the new one, and a bad
// value fails the readers of that variable only.
void settings_reload();

}  // namespace wgt
