// The WGT_* settings (runtime/settings.hpp): strict parsing of every kind, the error naming
// the variable and its form, the Runtime failing at first use on a bad value, and the table
// kept complete against the sources and the README.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "runtime/settings.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

using Env = std::map<std::string, std::string>;

Settings parse(const Env& env, bool strict = true) {
  return parse_settings(
      [&](const char* n) -> const char* {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      strict);
}

// The message of the InvalidArgument error that parsing {name: value} gives, or "" if none.
std::string parse_error(const std::string& name, const std::string& value) {
  try {
    parse({{name, value}});
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    return e.message();
  }
  return "";
}

const SettingInfo& info(const std::string& name) {
  for (const SettingInfo& e : setting_table())
    if (name == e.name) return e;
  throw std::runtime_error("no setting " + name);
}

TEST(Settings, BadValuesNameTheVariableAndTheForm) {
  EXPECT_EQ(parse_error("WGT_MEMORY_BUDGET", "1.5"),
            "WGT_MEMORY_BUDGET='1.5': expected a whole number of bytes (e.g. 2147483648), 0 = default");
  const std::map<std::string, std::vector<std::string>> bad = {
      {"WGT_MEMORY_BUDGET", {"-1", "nan", "NaN", "inf", "1e30", "1.5", "2GiB", " 5", "5 ", "+5", "0x10",
                             "18446744073709551616", "99999999999999999999999"}},
      {"WGT_MIN_GPU_WORK", {"-5", "1.5", "nan", "inf", "1e3", "9007199254740993"}},
      {"WGT_NUM_THREADS", {"0", "abc", "-1", "4097", "8x", "1.0", "+4"}},
      {"WGT_POLICY", {"Auto", "gpu", "cpu-only ", "1"}},
      {"WGT_CPU_MODE", {"slow", "FAST"}},
      {"WGT_FALLBACK", {"2", "yes", "on", "-1", "01"}},
      {"WGT_TRACE", {"true!", "10"}},
      {"WGT_WEBGPU_TIMEOUT_MS", {"0", "soon", "4294967296", "-1"}},
      {"WGT_WEBGPU_BATCH", {"0", "1048577"}},
      {"WGT_WEBGPU_ADAPTER", {"-1", "1024", "a"}},
      {"WGT_MATMUL_TILE", {"64x64x8x4", "64x64x8x4x4x4", "64x64x8x0x4", "64xx64x8x4x4", "x64x64x8x4x4", "off",
                           "64x64x8x4x65537"}},
      {"WGT_MATMUL_GEMV", {"256", "256x64x2", "256x0", "of"}},
      {"WGT_MATMUL_GEMV_VEC", {"256", "256x32x2x1", "OFF"}},
      // The data paths removed after losing on the H200 are errors, not silently `auto`.
      {"WGT_MATMUL_SGMAT_VARIANT", {"copy", "bdirect", "bdirect-wide", "Wide", "3"}},
      {"WGT_QMATVEC_UNROLL", {"0", "3", "16"}},
      {"WGT_QMATVEC_KSPLIT", {"3", "16"}},
      {"WGT_ATTN_DECODE_LANES", {"2", "12", "64"}},
      {"WGT_QMATVEC_WAVE", {"-1", "4097", "132 "}},
  };
  for (const auto& [name, values] : bad)
    for (const std::string& v : values) {
      const std::string msg = parse_error(name, v);
      EXPECT_EQ(msg, name + "='" + v + "': expected " + info(name).form) << name << "='" << v << "'";
    }
}

TEST(Settings, GoodValuesParse) {
  Settings s = parse({{"WGT_MEMORY_BUDGET", "2147483648"},
                      {"WGT_MIN_GPU_WORK", "0"},
                      {"WGT_NUM_THREADS", "4096"},
                      {"WGT_POLICY", "gpu-strict"},
                      {"WGT_CPU_MODE", "reference"},
                      {"WGT_FALLBACK", "0"},
                      {"WGT_TRACE", "1"},
                      {"WGT_HOST_CACHE_BYTES", "0"},
                      {"WGT_DAWN_PATH", "/opt/dawn/libwebgpu_wrapper.so"},
                      {"WGT_WEBGPU_TIMEOUT_MS", "4294967295"},
                      {"WGT_MATMUL_TILE", "128x128x8x8x8"},
                      {"WGT_MATMUL_GEMV", "off"},
                      {"WGT_MATMUL_GEMV_VEC", "128x32x2"},
                      {"WGT_MATMUL_F16", "packed"},
                      {"WGT_MATMUL_SGMAT_VARIANT", "wide"},
                      {"WGT_MATMUL_SGMAT_ABLATE", "5"},
                      {"WGT_QMATVEC_KERNEL", "i8"},
                      {"WGT_QMATVEC_SUBGROUPS", "off"},
                      {"WGT_QMATVEC_KSPLIT", "8"},
                      {"WGT_QMATVEC_WAVE", "0"},
                      {"WGT_ATTN_DECODE_KERNEL", "split"}});
  EXPECT_EQ(**s.memory_budget, 2147483648ull);
  EXPECT_EQ(**s.min_gpu_work, 0u);
  EXPECT_EQ(**s.num_threads, 4096u);
  EXPECT_EQ(*s.matmul_sgmat_variant, 2u);  // the choice's index: webgpu::SgVariant::Wide
  EXPECT_EQ(*s.matmul_sgmat_ablate, 5u);
  EXPECT_EQ(**s.policy, PolicyMode::GpuStrict);
  EXPECT_EQ(**s.cpu_mode, CpuMode::Reference);
  EXPECT_FALSE(**s.fallback);
  EXPECT_TRUE(**s.trace);
  EXPECT_EQ(*s.host_cache_bytes, 0u);
  EXPECT_EQ(**s.dawn_path, "/opt/dawn/libwebgpu_wrapper.so");
  EXPECT_EQ(*s.webgpu_timeout_ms, 4294967295ull);
  EXPECT_EQ(to_string(**s.matmul_tile), "128x128x8x8x8");
  EXPECT_TRUE(s.matmul_gemv->value().off);
  EXPECT_EQ(to_string(**s.matmul_gemv_vec), "128x32x2");
  EXPECT_EQ(*s.matmul_f16, Settings::F16Store::Packed);
  EXPECT_STREQ(*s.qmatvec_kernel, "i8");
  EXPECT_FALSE(*s.qmatvec_subgroups);
  EXPECT_EQ(**s.qmatvec_ksplit, 8u);
  EXPECT_EQ(**s.qmatvec_wave, 0u);  // set to 0, not unset
  EXPECT_TRUE(*s.attn_decode_split);
  // The largest byte count, and a budget of 0 (= the default).
  EXPECT_EQ(**parse({{"WGT_MEMORY_BUDGET", "18446744073709551615"}}).memory_budget, ~uint64_t{0});
  EXPECT_EQ(**parse({{"WGT_MEMORY_BUDGET", "0"}}).memory_budget, 0u);
}

TEST(Settings, UnsetOrEmptyKeepsTheDefaults) {
  for (const Settings& s : {parse({}), parse({{"WGT_MEMORY_BUDGET", ""}, {"WGT_QMATVEC_KERNEL", ""}})}) {
    EXPECT_FALSE(s.memory_budget->has_value());
    EXPECT_FALSE(s.num_threads->has_value());
    EXPECT_FALSE(s.qmatvec_wave->has_value());
    EXPECT_EQ(*s.qmatvec_kernel, nullptr);
    EXPECT_EQ(*s.webgpu_timeout_ms, 60000u);
    EXPECT_EQ(*s.host_cache_bytes, uint64_t{1} << 30);
    EXPECT_TRUE(*s.matmul_vec);
  }
}

// Every Count entry: its bounds parse, one past them does not, and a power-of-two entry
// rejects the values between.
TEST(Settings, EveryCountRangeIsEnforced) {
  for (const SettingInfo& e : setting_table()) {
    if (e.kind != SettingKind::Count) continue;
    EXPECT_EQ(parse_error(e.name, std::to_string(e.lo)), "") << e.name;
    EXPECT_EQ(parse_error(e.name, std::to_string(e.hi)), "") << e.name;
    EXPECT_NE(parse_error(e.name, std::to_string(e.hi + 1)), "") << e.name;
    if (e.lo > 0) {
      EXPECT_NE(parse_error(e.name, std::to_string(e.lo - 1)), "") << e.name;
    }
    EXPECT_NE(parse_error(e.name, "-" + std::to_string(e.lo)), "") << e.name;
    if (e.pow2 && e.hi >= 4) {
      EXPECT_NE(parse_error(e.name, "3"), "") << e.name;
    }
  }
}

// A lenient parse (what settings_reload() does) keeps each bad variable's error in its own
// field: reading that field throws it, the others read normally.
TEST(Settings, LenientParseFailsOnlyTheBadVariable) {
  Settings s = parse({{"WGT_QMATVEC_ROWS", "9"}, {"WGT_WEBGPU_TIMEOUT_MS", "5"}}, false);
  EXPECT_EQ(*s.webgpu_timeout_ms, 5u);
  try {
    (void)*s.qmatvec_rows;
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.message(), "WGT_QMATVEC_ROWS='9': expected a whole number from 1 to 8");
  }
  EXPECT_THROW(parse({{"WGT_QMATVEC_ROWS", "9"}}), Error);  // strict: the parse itself fails
}

TEST(Settings, TableEntriesAreComplete) {
  std::set<std::string> names;
  for (const SettingInfo& e : setting_table()) {
    EXPECT_EQ(std::string(e.name).rfind("WGT_", 0), 0u) << e.name;
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate " << e.name;
    EXPECT_GT(std::string(e.form).size(), 2u) << e.name;
    EXPECT_GT(std::string(e.dflt).size(), 0u) << e.name;
    EXPECT_GT(std::string(e.doc).size(), 5u) << e.name;
    EXPECT_NE(e.store, nullptr) << e.name;
    if (e.kind == SettingKind::Choice) {
      EXPECT_GE(e.choices.size(), 2u) << e.name;
    }
  }
}

// A bad value fails the first use of the library: Runtime::get() in a fresh process (the
// Runtime is a singleton) throws InvalidArgument naming the variable, also for a variable
// only the WebGPU kernels read.
void first_use_with(const char* name, const char* value) {
  ::setenv(name, value, 1);
  try {
    (void)Runtime::get();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(e.kind() == ErrorKind::InvalidArgument ? 3 : 4);
  }
  // A good value reaches the policy.
  std::exit(std::string(name) != "WGT_MIN_GPU_WORK" || Runtime::get().policy().min_gpu_work == std::atof(value) ? 0 : 5);
}

TEST(SettingsDeathTest, BadValueFailsTheRuntimeAtFirstUse) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // re-executes the binary: a fresh Runtime
  EXPECT_EXIT(first_use_with("WGT_MEMORY_BUDGET", "1.5"), ::testing::ExitedWithCode(3),
              "WGT_MEMORY_BUDGET='1.5': expected a whole number of bytes");
  EXPECT_EXIT(first_use_with("WGT_NUM_THREADS", "0"), ::testing::ExitedWithCode(3), "WGT_NUM_THREADS='0': expected");
  EXPECT_EXIT(first_use_with("WGT_QMATVEC_ROWS", "nan"), ::testing::ExitedWithCode(3), "WGT_QMATVEC_ROWS='nan': expected");
  EXPECT_EXIT(first_use_with("WGT_MIN_GPU_WORK", "1000"), ::testing::ExitedWithCode(0), "");
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every quoted "WGT_..." name in src/ and tools/ is a variable of the table, and only
// settings.cpp calls getenv on one: a new knob cannot skip the parser or the README.
TEST(Settings, SourcesReadOnlyTableVariables) {
  std::set<std::string> table;
  for (const SettingInfo& e : setting_table()) table.insert(e.name);
  const std::regex quoted("\"(WGT_[A-Z0-9_]+)");
  const std::regex direct("getenv\\(\\s*\"WGT_");
  int files = 0;
  for (const char* dir : {"src", "tools"})
    for (const auto& ent : std::filesystem::recursive_directory_iterator(std::filesystem::path(WGT_SOURCE_DIR) / dir)) {
      const std::string ext = ent.path().extension().string();
      if (!ent.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      ++files;
      const std::string text = read_text(ent.path());
      for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it)
        EXPECT_TRUE(table.count((*it)[1].str())) << ent.path() << " names " << (*it)[1] << ", which the table lacks";
      if (ent.path().filename() != "settings.cpp") {
        EXPECT_FALSE(std::regex_search(text, direct)) << ent.path() << " reads a WGT_ variable with getenv";
      }
    }
  EXPECT_GT(files, 20);  // the tree was found
}

// README.md "Tuning and observing" documents exactly the table's variables.
TEST(Settings, ReadmeTableListsEveryVariable) {
  const std::string readme = read_text(std::filesystem::path(WGT_SOURCE_DIR) / "README.md");
  const size_t start = readme.find("## Tuning and observing");
  ASSERT_NE(start, std::string::npos);
  const size_t end = readme.find("\n## ", start + 1);
  const std::string section = readme.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::set<std::string> rows;
  const std::regex row("\n\\| `(WGT_[A-Z0-9_]+)` \\|");
  for (std::sregex_iterator it(section.begin(), section.end(), row), e; it != e; ++it) rows.insert((*it)[1].str());
  std::set<std::string> table;
  for (const SettingInfo& e : setting_table()) table.insert(e.name);
  for (const std::string& n : table) EXPECT_TRUE(rows.count(n)) << n << " is missing from README.md's settings table";
  for (const std::string& n : rows) EXPECT_TRUE(table.count(n)) << "README.md documents " << n << ", which is not read";
}

}  // namespace
}  // namespace wgt
