// The harness commands: `dlscale run`, `accept`, `sites`, `plans` and the hand-over to the Python
// analysis (see commands.cpp).
#pragma once

#include <string>

namespace dls {
int run_main(int argc, char** argv);
int sites_main(int argc, char** argv);
int plans_main(int argc, char** argv);
int accept_main(int argc, char** argv);
// execs python3 -m dlsanalysis COMMAND (compare, reproduce, report, tables) with the rest of argv
int analysis_main(const std::string& command, int argc, char** argv);
}  // namespace dls
