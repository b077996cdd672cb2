// `dlscale run`, `dlscale sites`, `dlscale plans` (see run_main.cpp).
#pragma once

namespace dls {
int run_main(int argc, char** argv);
int sites_main(int argc, char** argv);
int plans_main(int argc, char** argv);
int accept_main(int argc, char** argv);
int compare_main(int argc, char** argv);  // execs python3 -m dlsanalysis compare
}  // namespace dls
