#include "npy.hpp"

#include <cstdio>
#include <memory>

#include "wgt/error.hpp"

namespace wgt::cli {

void write_npy_f32(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  std::string dims;
  size_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += (i ? ", " : "") + std::to_string(shape[i]);
    n *= static_cast<size_t>(shape[i]);
  }
  if (shape.size() == 1) dims += ",";  // a Python 1-tuple
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of
  // 64 bytes and ended by a newline, as the format asks.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw Error(ErrorKind::IO, "write_npy", "cannot open " + path + " for writing");
  const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(header.size() & 0xff),
                                 static_cast<unsigned char>(header.size() >> 8)};
  bool ok = std::fwrite(pre, 1, 10, f.get()) == 10 && std::fwrite(header.data(), 1, header.size(), f.get()) == header.size() &&
            std::fwrite(data, sizeof(float), n, f.get()) == n;
  ok = (std::fflush(f.get()) == 0) && ok;
  if (!ok) throw Error(ErrorKind::IO, "write_npy", "writing " + path + " failed (disk full?)");
}

}  // namespace wgt::cli
