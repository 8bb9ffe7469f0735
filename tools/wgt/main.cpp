// wgt: command-line front end of wgtensor.
#include <cstdio>
#include <string>

#include "wgt/wgt.hpp"

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "demo";
  std::printf("wgtensor %s (%s)\n", wgt::version(), cmd.c_str());
  return 0;
}
