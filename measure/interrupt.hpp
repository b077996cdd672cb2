// Ctrl-C / SIGTERM for the measuring commands. Two modes:
//   immediate  the process exits at once with 128 + signal. Records are appended one whole line
//              at a time and synced, so stopping between two appends loses nothing; this is
//              right for commands that write a record per measured point (kernels, collectives).
//   graceful   the first signal only raises a flag that a long measurement polls (a training
//              run checks it every step, ends the run, and writes its record with what it
//              measured so far, status "failed" and the signal named in the error); a second
//              signal exits at once.
// The handlers are installed explicitly so that a SIGINT that a shell set to "ignore" for a
// background job still stops the run. SIGUSR1 acts like SIGINT: under Open MPI's mpirun, a
// Ctrl-C makes mpirun kill the ranks, whereas `kill -USR1 <mpirun>` is forwarded to every rank
// and stops a distributed training run gracefully (the ranks agree on the step to stop at).
#pragma once

namespace dls {

void install_interrupt_handlers();     // immediate mode
void set_graceful_interrupt(bool on);  // switch modes (from the command that can stop cleanly)
int interrupt_signal();                // 0, or the signal that asked the graceful stop
inline bool interrupt_requested() { return interrupt_signal() != 0; }

}  // namespace dls
