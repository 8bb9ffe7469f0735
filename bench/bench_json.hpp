// Machine-readable benchmark results: `--json FILE` on every bench program (and `wgt bench`)
// appends one JSON object per measurement to FILE (JSON lines), beside the unchanged human
// output. bench/bench_table.py builds BENCHMARKS.md's summary table from these records and the
// PyTorch scripts' (bench/bench_records.py writes the same format).
//
// A record: {"bench", "case", "metric", "unit", "value", "std" (optional), "engine", "device",
// extra fields...}. "engine" is the Dawn library the WebGPU backend loaded (npm, debian, or the
// library's file name) or what the caller says (cpu); "value" is null when not finite.
//
// Appending (open, write, close per record) keeps every record written before a crash or a
// timeout, and lets several programs of one suite run share one file.
#pragma once
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "wgt/webgpu_info.hpp"

namespace wgt::bench {

namespace json_detail {

inline std::string& path() {
  static std::string p;
  return p;
}

inline std::string quote(const std::string& s) {
  std::string o = "\"";
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
    else if (c == '\n') o += "\\n";
    else if (c == '\t') o += "\\t";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else o += static_cast<char>(c);
  }
  return o + "\"";
}

inline std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace json_detail

// Takes `--json FILE` (or `--json=FILE`) out of argv, so that a program's own parser never
// sees it; returns false (with a message on stderr) when FILE is missing.
inline bool json_from_args(int& argc, char** argv) {
  int w = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json")) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "--json needs a file name\n");
        return false;
      }
      json_detail::path() = argv[++i];
    } else if (!std::strncmp(argv[i], "--json=", 7)) {
      json_detail::path() = argv[i] + 7;
    } else {
      argv[w++] = argv[i];
    }
  }
  argc = w;
  argv[argc] = nullptr;
  return true;
}

// Sets the output file directly (programs with their own option parser, e.g. `wgt bench`).
inline void json_to(const std::string& file) { json_detail::path() = file; }
inline bool json_enabled() { return !json_detail::path().empty(); }

// The loaded Dawn engine in one word: npm, debian, or the library's file name (a path request
// names the file; Debian's library is libwebgpu_dawn.so*).
inline std::string engine_label() {
  const WebGPUEngineInfo e = webgpu_engine_info();
  if (e.engine.empty()) return "none";
  if (e.engine == "npm" || e.engine.rfind("debian", 0) == 0) return e.engine.substr(0, e.engine.find(' '));
  const std::string file = e.library.substr(e.library.find_last_of('/') + 1);
  if (file.rfind("libwebgpu_dawn", 0) == 0) return "debian";
  if (file.rfind("libwebgpu_wrapper", 0) == 0) return "npm";
  return file;
}

struct Record {
  std::string bench, case_, metric, unit;
  double value = NAN;
  double std_dev = NAN;  // written only when finite
  std::string engine;    // empty: engine_label()
  std::vector<std::pair<std::string, std::string>> fields;  // extra key -> JSON text

  Record(std::string b, std::string c, std::string m, std::string u, double v)
      : bench(std::move(b)), case_(std::move(c)), metric(std::move(m)), unit(std::move(u)), value(v) {}
  Record& sd(double s) { return std_dev = s, *this; }
  Record& on(std::string e) { return engine = std::move(e), *this; }
  Record& with(const std::string& key, double v) { return fields.emplace_back(key, json_detail::number(v)), *this; }
  Record& with(const std::string& key, const std::string& v) {
    return fields.emplace_back(key, json_detail::quote(v)), *this;
  }
  Record& with(const std::string& key, const char* v) { return with(key, std::string(v)); }
  // The result's check against the CPU reference: bench_table.py shows a failed one as
  // "invalid: wrong results", never as a figure.
  Record& checked(double max_rel_err, double bound) {
    return with("check", max_rel_err <= bound ? "ok" : "failed").with("max_rel_err", max_rel_err).with("bound", bound);
  }

  std::string line() const {
    using json_detail::number;
    using json_detail::quote;
    std::string s = "{\"bench\": " + quote(bench) + ", \"case\": " + quote(case_) + ", \"metric\": " + quote(metric) +
                    ", \"unit\": " + quote(unit) + ", \"value\": " + number(value);
    if (std::isfinite(std_dev)) s += ", \"std\": " + number(std_dev);
    s += ", \"engine\": " + quote(engine.empty() ? engine_label() : engine);
    for (const auto& [k, v] : fields) s += ", " + quote(k) + ": " + v;
    return s + "}";
  }
};

// Appends the record to the --json file (nothing without one). A file that cannot be opened
// is reported once per record on stderr; the human output goes on.
inline void emit(const Record& r) {
  if (!json_enabled()) return;
  std::FILE* f = std::fopen(json_detail::path().c_str(), "a");
  if (!f) {
    std::fprintf(stderr, "--json: cannot append to %s: %s\n", json_detail::path().c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(f, "%s\n", r.line().c_str());
  std::fclose(f);
}

}  // namespace wgt::bench
