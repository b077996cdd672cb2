// Ctrl-C / SIGTERM handling (see interrupt.hpp). Only async-signal-safe calls in the handler.
#include "measure/interrupt.hpp"

#include <unistd.h>

#include <csignal>

namespace dls {
namespace {

volatile std::sig_atomic_t g_graceful = 0;
volatile std::sig_atomic_t g_signal = 0;

void say(const char* msg, unsigned long n) {
  ssize_t ignored = write(STDERR_FILENO, msg, n);
  (void)ignored;
}

extern "C" void on_interrupt(int sig) {
  if (g_graceful && g_signal == 0) {
    g_signal = sig;
    const char msg[] =
        "\ndlscale: interrupted; finishing the step and writing the record (again to quit at "
        "once)\n";
    say(msg, sizeof msg - 1);
    return;
  }
  const char msg[] = "\ndlscale: interrupted; the records written so far are complete\n";
  say(msg, sizeof msg - 1);
  _exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);  // what mpirun forwards to the ranks without killing them
}

void set_graceful_interrupt(bool on) { g_graceful = on ? 1 : 0; }

int interrupt_signal() { return int(g_signal); }

}  // namespace dls
