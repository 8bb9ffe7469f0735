// Readers for the reference fixtures in ../shared/fixtures (made outside the project): the
// integer arrays of the .json description and f32 .npy arrays. A missing fixture fails the
// test (never a skip): CI has shared/ beside the clone.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef WGT_FIXTURES_DIR
#error "WGT_FIXTURES_DIR must be defined by the build"
#endif

namespace wgt_test {

// The build's fixture folder, or $WGT_TEST_FIXTURES where the tests run away from the checkout
// (the GPU benchmark machine gets a copy of the fixtures beside the binaries).
inline std::string fixture_path(const std::string& name) {
  const char* over = std::getenv("WGT_TEST_FIXTURES");
  return std::string(over && *over ? over : WGT_FIXTURES_DIR) + "/" + name;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) ADD_FAILURE() << "fixture missing: " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The integer array `"key": [1, 2, 3]` of a small JSON document.
inline std::vector<int32_t> json_int_array(const std::string& json, const std::string& key) {
  std::vector<int32_t> out;
  const size_t k = json.find("\"" + key + "\"");
  if (k == std::string::npos) {
    ADD_FAILURE() << "key " << key << " not in the fixture";
    return out;
  }
  size_t i = json.find('[', k), end = json.find(']', k);
  if (i == std::string::npos || end == std::string::npos) return out;
  std::stringstream ss(json.substr(i + 1, end - i - 1));
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(static_cast<int32_t>(std::stol(item)));
  return out;
}

struct NpyF32 {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// A little-endian f32, C-order .npy (versions 1 and 2).
inline NpyF32 read_npy_f32(const std::string& path) {
  NpyF32 r;
  const std::string s = read_file(path);
  if (s.size() < 12 || s.compare(1, 5, "NUMPY") != 0) {
    ADD_FAILURE() << path << " is not a .npy file";
    return r;
  }
  const int major = static_cast<unsigned char>(s[6]);
  size_t hlen = 0, off = 0;
  if (major == 1) hlen = static_cast<unsigned char>(s[8]) | (static_cast<unsigned char>(s[9]) << 8), off = 10;
  else hlen = static_cast<unsigned char>(s[8]) | (static_cast<unsigned char>(s[9]) << 8) | (static_cast<unsigned char>(s[10]) << 16), off = 12;
  const std::string header = s.substr(off, hlen);
  EXPECT_NE(header.find("'<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  const size_t p = header.find("'shape': (");
  std::stringstream ss(header.substr(p + 10, header.find(')', p) - p - 10));
  std::string item;
  size_t n = 1;
  while (std::getline(ss, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos) r.shape.push_back(std::stol(item)), n *= r.shape.back();
  r.data.resize(n);
  if (s.size() < off + hlen + n * 4) {
    ADD_FAILURE() << path << " is truncated";
    return r;
  }
  std::memcpy(r.data.data(), s.data() + off + hlen, n * 4);
  return r;
}

}  // namespace wgt_test
