// The wgt subcommands that live in their own files (each takes the arguments after its name).
#pragma once
#include <string>
#include <vector>

namespace wgt::cli {

int cmd_run(const std::vector<std::string>& args);
int cmd_logits(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);

}  // namespace wgt::cli
