// The table of WGT_* variables, their strict parser, and the process's cached settings.
#include "runtime/settings.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>

#include "wgt/error.hpp"

namespace wgt {

void throw_setting_error(const std::string& message) { throw_error(ErrorKind::InvalidArgument, "settings", message); }

namespace {

template <class T> struct Inner { using type = T; };
template <class T> struct Inner<std::optional<T>> { using type = T; };

template <class T, class U>
void put(Setting<T>& f, const std::string& err, U&& value) {
  if (err.empty()) f = T(std::forward<U>(value));
  else f.error = err;
}

// Stores of the generic kinds, by the field they fill.
template <auto M>
void num(Settings& s, const SettingValue& v, const std::string& e) {
  using T = std::remove_cvref_t<decltype(*(s.*M))>;
  put(s.*M, e, static_cast<typename Inner<T>::type>(v.num));
}
template <auto M>
void dims(Settings& s, const SettingValue& v, const std::string& e) { put(s.*M, e, v.dims); }
// Choices into an enum (or an optional one) whose values follow the choice list's order.
template <auto M>
void choice(Settings& s, const SettingValue& v, const std::string& e) { num<M>(s, v, e); }
// Choices {"on", "off"} into a bool.
template <auto M>
void on_off(Settings& s, const SettingValue& v, const std::string& e) { put(s.*M, e, v.num == 0); }

using S = Settings;
using K = SettingKind;
constexpr uint64_t kU32 = 0xffffffffull;

// The README's table lists the same variables (tests/core/test_settings.cpp checks both ways).
const std::vector<SettingInfo>& table() {
  static const std::vector<SettingInfo> t = {
      // ---- runtime policy: read when the Runtime is constructed ----
      {"WGT_POLICY", K::Choice, "auto, gpu-strict or cpu-only", "auto",
       "`gpu-strict` never falls back (typed error), `cpu-only` runs everything on the CPU", 0, 0, false,
       {"auto", "gpu-strict", "cpu-only"}, choice<&S::policy>},
      {"WGT_CPU_MODE", K::Choice, "fast or reference", "fast",
       "`fast` (threads, SIMD, OpenBLAS) or `reference` (plain loops, the oracle)", 0, 0, false, {"fast", "reference"},
       [](S& s, const SettingValue& v, const std::string& e) {
         put(s.cpu_mode, e, std::optional<CpuMode>(v.num == 0 ? CpuMode::Fast : CpuMode::Reference));
       }},
      {"WGT_FALLBACK", K::Flag, "0 or 1", "1", "`0` forbids CPU fallback for ops on device tensors", 0, 0, false, {},
       num<&S::fallback>},
      {"WGT_MIN_GPU_WORK", K::Count, "a whole number of elementwise-equivalent operations (e.g. 65536)", "65536",
       "load threshold: host-input ops with less estimated work run on the CPU", 0, uint64_t{1} << 53, false, {},
       num<&S::min_gpu_work>},
      {"WGT_MEMORY_BUDGET", K::Bytes, "a whole number of bytes (e.g. 2147483648), 0 = default",
       "90% of the adapter's heap, else 4 GiB", "device-memory budget", 0, ~uint64_t{0}, false, {},
       num<&S::memory_budget>},
      {"WGT_TRACE", K::Flag, "0 or 1", "0", "`1` prints one line per policy decision to stderr", 0, 0, false, {},
       num<&S::trace>},
      // ---- host side ----
      {"WGT_NUM_THREADS", K::Count, "a whole number from 1 to 4096", "all cores", "CPU fast-mode threads", 1, 4096,
       false, {}, num<&S::num_threads>},
      {"WGT_HOST_CACHE_BYTES", K::Bytes, "a whole number of bytes (e.g. 1073741824), 0 = keep none", "1 GiB",
       "cap on the freed host blocks (64 KiB and more) kept for reuse", 0, ~uint64_t{0}, false, {}, num<&S::host_cache_bytes>},
      {"WGT_HOST_PROFILE", K::Flag, "0 or 1", "0",
       "`1` times the host side of every op in stages and prints the table to stderr at exit; API: `host_profile*` in "
       "`wgt/profile.hpp`",
       0, 0, false, {}, num<&S::host_profile>},
      // ---- WebGPU runtime: read when the adapters and devices are created ----
      {"WGT_DAWN", K::Path, "auto, npm, debian or a path to a libwebgpu_dawn.so", "auto",
       "the Dawn engine: `npm` (bun-webgpu), `debian` (libwebgpu-dawn0: shader-f16 and subgroup matrices on NVIDIA; "
       "on an older glibc the process re-starts itself under the runtime of `scripts/setup_dawn_debian.sh`) or a "
       "library; `auto` takes the system's Debian Dawn, else npm; API: `set_dawn_engine` in `wgt/webgpu_info.hpp`",
       0, 0, false, {},
       [](S& s, const SettingValue& v, const std::string& e) { put(s.dawn, e, std::optional<std::string>(v.text)); }},
      {"WGT_DAWN_PATH", K::Path, "a file path", "by name, through the binary's RUNPATH: Dawn's directory in the build tree, `<libdir>/wgtensor/` when installed", "path of the npm engine's `libwebgpu_wrapper.so`",
       0, 0, false, {},
       [](S& s, const SettingValue& v, const std::string& e) { put(s.dawn_path, e, std::optional<std::string>(v.text)); }},
      {"WGT_WEBGPU_ADAPTER", K::Count, "an adapter ordinal from 0 to 1023 (`wgt info` lists them)", "0",
       "the one adapter to use", 0, 1023, false, {}, num<&S::webgpu_adapter>},
      {"WGT_WEBGPU_VALIDATE", K::Flag, "0 or 1", "0", "`1` keeps Dawn's validation and robustness (debugging)", 0, 0,
       false, {}, num<&S::webgpu_validate>},
      {"WGT_WEBGPU_DISABLE_F16", K::Flag, "0 or 1", "0",
       "`1` leaves shader-f16 unrequested (emulates adapters without it: f16 runs packed in u32)", 0, 0, false, {},
       num<&S::webgpu_disable_f16>},
      {"WGT_WEBGPU_DISABLE_PACKED_DOT", K::Flag, "0 or 1", "0",
       "`1` treats dot4I8Packed as missing (the i8 matvecs run `stream`; tests)", 0, 0, false, {},
       num<&S::webgpu_disable_packed_dot>},
      {"WGT_WEBGPU_TIMEOUT_MS", K::Count, "a whole number of milliseconds from 1 to 4294967295", "60000",
       "timeout of every wait on the device", 1, kU32, false, {}, num<&S::webgpu_timeout_ms>},
      {"WGT_WEBGPU_POOL_LIMIT", K::Bytes, "a whole number of bytes (e.g. 2147483648)", "2 GiB",
       "free device buffers kept for reuse", 0, ~uint64_t{0}, false, {}, num<&S::webgpu_pool_limit>},
      {"WGT_WEBGPU_BATCH", K::Count, "a whole number from 1 to 1048576", "256", "dispatches per submitted command buffer",
       1, 1u << 20, false, {}, num<&S::webgpu_batch>},
      {"WGT_WEBGPU_EARLY", K::Count, "a whole number from 0 to 1048576", "8",
       "a batch holding a multiple of this many dispatches is submitted early when the device has finished "
       "everything submitted before, so the GPU starts while the host records the rest; 0 = off",
       0, 1u << 20, false, {}, num<&S::webgpu_early>},
      {"WGT_WEBGPU_BIND_CACHE", K::Flag, "0 or 1", "1 on hardware adapters, 0 on software ones",
       "cached bind groups with a dynamic-offset params uniform", 0, 0, false, {}, num<&S::webgpu_bind_cache>},
      {"WGT_WEBGPU_PROFILE", K::Flag, "0 or 1", "0",
       "`1` times every kernel on the GPU (timestamp queries; serializes batches) and prints a per-kernel table to "
       "stderr at exit; API: `wgt/profile.hpp`",
       0, 0, false, {}, num<&S::webgpu_profile>},
      // ---- kernel choices and tuning: read by the launchers on every call ----
      {"WGT_MATMUL_ACC", K::Choice, "f32 or f16", "f32", "accumulator type of the f16 matmul tiles", 0, 0, false,
       {"f32", "f16"}, [](S& s, const SettingValue& v, const std::string& e) { put(s.matmul_f16_acc, e, v.num == 1); }},
      {"WGT_MATMUL_TILE", K::Dims, "BMxBNxBKxTMxTN (e.g. 128x128x8x8x8)", "by shape and device",
       "matmul workgroup tile and per-invocation tile", 5, 5, false, {}, dims<&S::matmul_tile>},
      {"WGT_MATMUL_SGMAT", K::Dims, "BMxBNxBKxFMxFN (e.g. 128x128x32x4x2) or off", "by shape and device",
       "f16 matmul on subgroup matrices (tensor cores): workgroup tile and fragments per subgroup, or `off`", 5, 5,
       false, {"off"}, dims<&S::matmul_sgmat>},
      {"WGT_MATMUL_SGMAT_VARIANT", K::Choice, "auto, staged or wide", "auto (wide where it applies)",
       "data path of the subgroup-matrix f16 matmul's K chunks: `staged` 8-byte loads and 16-bit workgroup stores, "
       "`wide` 16-byte loads; `auto` takes `wide` where the tile allows it; the plan keeps `staged` where a call's "
       "strides or offsets are not multiples of 8",
       0, 0, false, {"auto", "staged", "wide"},
       [](S& s, const SettingValue& v, const std::string& e) {
         put(s.matmul_sgmat_variant, e, static_cast<uint32_t>(v.num));
       }},
      {"WGT_MATMUL_SGMAT_ABLATE", K::Count, "0 to 5", "0",
       "diagnosis only, WRONG RESULTS: drops one stage of the subgroup-matrix matmul's K loop to bound what fixing it "
       "can buy (1 staging stores, 2 global fetches, 3 fragment loads hoisted, 4 fewer MMAs, 5 MMAs only); "
       "bench_webgpu_matmul --ablate",
       0, 5, false, {}, num<&S::matmul_sgmat_ablate>},
      {"WGT_MATMUL_GEMV", K::Dims, "WGxKS (e.g. 256x64) or off", "by B's layout and device",
       "M = 1 matmul: invocations per workgroup and per column, or `off`", 2, 2, false, {"off"},
       dims<&S::matmul_gemv>},
      {"WGT_MATMUL_GEMV_VEC", K::Dims, "WGxKS or WGxKSxRB (e.g. 256x32 or 128x32x2) or off", "256x32x2",
       "vector gemv for K-contiguous B: invocations, lanes per row, rows per invocation, or `off`", 2, 3, false,
       {"off"}, dims<&S::matmul_gemv_vec>},
      {"WGT_MATMUL_SUBGROUPS", K::Choice, "on or off", "on", "`off` forces the workgroup-tree reduction", 0, 0, false,
       {"on", "off"}, on_off<&S::matmul_subgroups>},
      {"WGT_MATMUL_F16", K::Choice, "auto, native or packed", "auto",
       "f16 operands as native `f16` (needs shader-f16) or packed two per u32", 0, 0, false,
       {"auto", "native", "packed"}, choice<&S::matmul_f16>},
      {"WGT_MATMUL_VEC", K::Choice, "on or off", "on", "`off` keeps scalar global loads and stores", 0, 0, false,
       {"on", "off"}, on_off<&S::matmul_vec>},
      {"WGT_REDUCE_SUBGROUPS", K::Choice, "on or off", "on", "`off` forces the workgroup-memory row reductions", 0, 0,
       false, {"on", "off"}, on_off<&S::reduce_subgroups>},
      {"WGT_FFT_KERNEL", K::Choice, "auto, local or stockham", "auto",
       "WebGPU power-of-two FFTs: `stockham` (register-resident Stockham kernel), `local` (the mixed-radix "
       "workgroup-memory kernel, as for the other lengths), `auto` (stockham)",
       0, 0, false, {"auto", "local", "stockham"}, choice<&S::fft_kernel>},
      {"WGT_FFT_ROW", K::Count, "a power of two from 2 to 4096", "1024 (or the largest one-workgroup length where smaller)",
       "row length n2 of the WebGPU four-step FFT (n = n1 x n2, n1 the strided column length)", 2, 4096, true, {},
       num<&S::fft_row>},
      {"WGT_FFT_RADIX", K::Count, "4, 8 or 16", "8",
       "points per invocation (and largest radix) of the WebGPU Stockham FFT: fewer hold fewer registers, with "
       "more invocations per line and more exchange passes",
       4, 16, true, {}, num<&S::fft_radix>},
      {"WGT_FFT_EXCHANGE", K::Choice, "complex or split", "split",
       "how the WebGPU Stockham FFT exchanges points between passes: `complex` (one vec2 array), `split` (the real "
       "and the imaginary parts in turn through an f32 array: half the workgroup memory, twice the barriers)",
       0, 0, false, {"complex", "split"}, choice<&S::fft_exchange>},
      {"WGT_SPARSE_SCHEDULE", K::Choice, "auto, thread, group, binned, merge or adaptive", "auto",
       "WebGPU SpMV/SpMM schedule for every matrix (docs/sparse.md): `auto` chooses by the row statistics; "
       "`adaptive` (CSR-Adaptive row blocks) is SpMV's, SpMM then takes `merge`",
       0, 0, false, {"auto", "thread", "group", "binned", "merge", "adaptive"},
       [](S& s, const SettingValue& v, const std::string& e) {
         put(s.sparse_schedule, e,
             v.num == 0 ? std::optional<uint8_t>() : std::optional<uint8_t>(static_cast<uint8_t>(v.num - 1)));
       }},
      {"WGT_SPARSE_LANE_ENTRIES", K::Count, "a whole number from 1 to 2048", "64",
       "adaptive SpMV row blocks of matrices made after: most entries one lane of a block of several rows adds "
       "alone (how long a row may share a block with others)",
       1, 2048, false, {}, num<&S::sparse_lane_entries>},
      {"WGT_ATTN_PREFILL", K::Choice, "sg or scalar", "sg",
       "prefill attention: the subgroup-matrix kernel (where it applies) or the scalar one", 0, 0, false,
       {"sg", "scalar"},
       [](S& s, const SettingValue& v, const std::string& e) { put(s.attn_prefill_scalar, e, v.num == 1); }},
      {"WGT_ATTN_PREFILL_SG", K::Dims, "NSGxBKV or NSGxBKVxLPR (e.g. 8x32 or 8x32x1)",
       "8x32 (16 keys where 32 do not fit), all lanes",
       "subgroup-matrix prefill attention: subgroups per workgroup, keys per tile and lanes per score row (1 or "
       "subgroup size / fragment rows)",
       2, 3, false, {},
       dims<&S::attn_prefill_sg>},
      {"WGT_ATTN_DECODE_KERNEL", K::Choice, "sg or split", "sg",
       "decode attention: the subgroup kernel (where it applies) or the split kernel", 0, 0, false, {"sg", "split"},
       [](S& s, const SettingValue& v, const std::string& e) { put(s.attn_decode_split, e, v.num == 1); }},
      {"WGT_ATTN_DECODE_WARPS", K::Count, "1, 2, 4 or 8", "4", "warps per workgroup of the subgroup decode kernel", 1,
       8, true, {}, num<&S::attn_decode_warps>},
      {"WGT_ATTN_DECODE_LANES", K::Count, "4, 8, 16 or 32", "by head size", "lanes per key of the subgroup decode kernel",
       4, 32, true, {}, num<&S::attn_decode_lanes>},
      {"WGT_ATTN_DECODE_UNROLL", K::Count, "1, 2 or 4", "4", "keys per lane and trip of the subgroup decode kernel", 1, 4,
       true, {}, num<&S::attn_decode_unroll>},
      {"WGT_ATTN_DECODE_DIRECT", K::Flag, "0 or 1", "1",
       "`1`: a subgroup decode with one key split normalizes and stores the output itself (no reduction pass)", 0, 0,
       false, {}, num<&S::attn_decode_direct>},
      {"WGT_ATTN_DECODE_CHUNK", K::Count, "a whole number of keys from 1 to 1073741823", "by shape",
       "keys per workgroup of the subgroup decode kernel", 1, (uint64_t{1} << 30) - 1, false, {},
       num<&S::attn_decode_chunk>},
      {"WGT_QMATMUL_SGMAT", K::Dims, "BMxBNxBKxFMxFN (e.g. 128x256x16x4x4) or off", "by shape and device",
       "quantized matmul with M > 4 rows (prompt processing) on subgroup matrices (x rounded to f16 per row, W "
       "decoded to f16): workgroup tile and fragments per subgroup, or `off` for the f32 tiled kernel",
       5, 5, false, {"off"}, dims<&S::qmatmul_sgmat>},
      {"WGT_QMATVEC_SUBGROUPS", K::Choice, "on or off", "on", "`off` forces the workgroup-reduction quantized matvec", 0,
       0, false, {"on", "off"}, on_off<&S::qmatvec_subgroups>},
      {"WGT_QMATVEC_KERNEL", K::Choice, "i8x2, i8 or stream", "i8x2",
       "decode (M <= 4) quantized matvec on WebGPU: `i8x2` (x held as two 8-bit terms per 16 values: about f16 "
       "precision), `i8` (one term: fastest, up to ~0.4% of a row's largest output), `stream` (f32 x); bounds in "
       "docs/quantization.md",
       0, 0, false, {"i8x2", "i8", "stream"},
       [](S& s, const SettingValue& v, const std::string& e) { put(s.qmatvec_kernel, e, v.word); }},
      {"WGT_QMATVEC_ROWS", K::Count, "a whole number from 1 to 8", "by format and kernel",
       "weight rows per warp of the streaming matvecs", 1, 8, false, {}, num<&S::qmatvec_rows>},
      {"WGT_QMATVEC_UNROLL", K::Count, "1, 2, 4 or 8", "2", "blocks per lane and trip of `stream`",
       1, 8, true, {}, num<&S::qmatvec_unroll>},
      {"WGT_QMATVEC_WARPS", K::Count, "a whole number from 1 to 8", "by kernel", "warps per workgroup of the matvecs", 1,
       8, false, {}, num<&S::qmatvec_warps>},
      {"WGT_QMATVEC_KSPLIT", K::Count, "1, 2, 4 or 8 (dividing the warps)", "by shape",
       "warps sharing a set of rows in the i8 matvecs", 1, 8, true, {}, num<&S::qmatvec_ksplit>},
      {"WGT_QMATVEC_WAVE", K::Count, "a whole number from 0 to 4096", "132 on NVIDIA H200 / H100 SXM, else `0`",
       "multiprocessors (SMs / CUs) of the GPU for the `i8x2` matvec's workgroup shape (`wgt info` shows the known "
       "count as `wgt:computeUnits`); `0` keeps the count-free shape; docs/quantization.md",
       0, 4096, false, {}, num<&S::qmatvec_wave>},
  };
  return t;
}

// Whole decimal number, digits only, without overflow.
bool parse_whole(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (~uint64_t{0} - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

bool parse_value(const SettingInfo& e, std::string_view text, SettingValue* out) {
  switch (e.kind) {
    case K::Choice:
      for (size_t i = 0; i < e.choices.size(); ++i)
        if (text == e.choices[i]) {
          out->num = i;
          out->word = e.choices[i];
          return true;
        }
      return false;
    case K::Flag:
      if (text != "0" && text != "1") return false;
      out->num = text == "1";
      return true;
    case K::Count:
    case K::Bytes:
      if (!parse_whole(text, &out->num) || out->num < e.lo || out->num > e.hi) return false;
      return !e.pow2 || (out->num & (out->num - 1)) == 0;
    case K::Path:
      out->text = std::string(text);
      return true;
    case K::Dims: {
      if (!e.choices.empty() && text == e.choices[0]) {
        out->dims.off = true;
        return true;
      }
      size_t start = 0;
      while (true) {
        const size_t x = text.find('x', start);
        uint64_t v = 0;
        if (!parse_whole(text.substr(start, x - start), &v) || v == 0 || v > 65536) return false;
        out->dims.v.push_back(static_cast<uint32_t>(v));
        if (x == std::string_view::npos) break;
        start = x + 1;
      }
      return out->dims.v.size() >= e.lo && out->dims.v.size() <= e.hi;
    }
  }
  return false;
}

std::mutex g_mu;
std::atomic<const Settings*> g_current{nullptr};
bool g_first_done = false;  // under g_mu: the strict first parse succeeded

}  // namespace

std::span<const SettingInfo> setting_table() { return table(); }

std::string to_string(const DimsSetting& d) {
  if (d.off) return "off";
  std::string s;
  for (uint32_t x : d.v) {
    if (!s.empty()) s += 'x';
    s += std::to_string(x);
  }
  return s;
}

Settings parse_environment_settings(bool strict) {
  return parse_settings([](const char* n) { return std::getenv(n); }, strict);
}

Settings parse_settings(const std::function<const char*(const char*)>& lookup, bool strict) {
  Settings s;
  for (const SettingInfo& e : table()) {
    const char* raw = lookup(e.name);
    if (!raw || !*raw) continue;  // unset: the field keeps its default
    SettingValue v;
    std::string err;
    if (!parse_value(e, raw, &v)) {
      err = std::string(e.name) + "='" + raw + "': expected " + e.form;
      if (strict) throw_setting_error(err);
    }
    e.store(s, v, err);
  }
  return s;
}

const Settings& settings() {
  if (const Settings* s = g_current.load(std::memory_order_acquire)) return *s;
  std::lock_guard<std::mutex> lock(g_mu);
  if (const Settings* s = g_current.load(std::memory_order_acquire)) return *s;
  // Snapshots are never freed: a reader on another thread may still hold a reference to the
  // one a reload replaced. Reloads happen only in tests and benchmarks, so they stay few.
  static std::vector<std::unique_ptr<Settings>> all;
  all.push_back(std::make_unique<Settings>(parse_settings([](const char* n) { return std::getenv(n); }, !g_first_done)));
  g_first_done = true;
  g_current.store(all.back().get(), std::memory_order_release);
  return *all.back();
}

void settings_reload() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_current.store(nullptr, std::memory_order_release);
}

const char* foreign_env(const char* name) {
  if (std::strncmp(name, "WGT_", 4) == 0)
    throw_error(ErrorKind::InvalidArgument, "foreign_env", std::string(name) + " is a setting: read it through settings()");
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace wgt
