// Uses an installed wgtensor: a product on the CPU, and on WebGPU when Dawn is found, compared.
// `--require-webgpu` fails when WebGPU is unavailable and prints which Dawn library the process
// mapped (the install test checks that it is the installed prefix's copy).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "wgt/wgt.hpp"

int main(int argc, char** argv) {
  using namespace wgt;
  const bool require_webgpu = argc > 1 && std::string(argv[1]) == "--require-webgpu";
  try {
    std::printf("wgtensor %s\n", version());
    Tensor a = rand_normal({5, 7}, 1), b = rand_normal({7, 3}, 2);
    Tensor ref = matmul(a, b);
    std::string why;
    if (!webgpu_available(&why)) {
      std::printf("webgpu: unavailable: %s\n", why.c_str());
      return require_webgpu ? 1 : 0;
    }
    Tensor dev = matmul(a.to(Device::webgpu()), b.to(Device::webgpu())).cpu();
    auto x = ref.to_vector<float>(), y = dev.to_vector<float>();
    double err = 0;
    for (size_t i = 0; i < x.size(); ++i) err = std::fmax(err, std::fabs(x[i] - y[i]));
    std::printf("webgpu: max |cpu - webgpu| = %g\n", err);
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);)
      if (line.find("libwebgpu_wrapper") != std::string::npos) {
        std::printf("dawn: %s\n", line.substr(line.find('/')).c_str());
        break;
      }
    return err < 1e-4 ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
