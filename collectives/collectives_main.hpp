// `dlscale collectives`: allreduce message-size sweeps (see collectives_main.cpp).
#pragma once

namespace dls {
int collectives_main(int argc, char** argv);
}
