// What text from a plan or a site may hold before it reaches a path, a batch script or a
// launcher line. Every value is quoted where it is written (shell_quote), and on top of that:
//   names       plan, site and experiment names, which become folder and job names:
//               [A-Za-z0-9][A-Za-z0-9._-]*, at most 128 characters (no '/', no leading '.',
//               so no '..', no NUL, no white space)
//   flags       the subcommand flags that plan axes and args become: [a-z0-9][a-z0-9_-]*
//   env names   environment variable names: [A-Za-z_][A-Za-z0-9_]*
//   scheduler   partition, account, qos (#SBATCH/#PBS/#BSUB header lines, unquoted there):
//               [A-Za-z0-9._,:+-]* (Slurm partition lists are comma-separated)
//   free text   environment values, launcher flags, argument values, the dlscale binary: no
//               control character (no newline, no NUL), at most 8192 characters; an argument
//               value at most 2048 (it is repeated on every point's command line) and may start
//               with '-' only as a number (-1), so it cannot pose as another flag.
//   any string  every string a plan or a site holds (descriptions too, which `sites` and
//               `plans` print): no control character but newline and tab (no terminal escape),
//               at most 65536 characters.
// Each check returns "" when the text is fine, else what is wrong with it, for the caller's
// ConfigError (which names the file, line and key).
#pragma once

#include <string>

namespace dls {

std::string bad_name(const std::string& s);            // plan, site, experiment names
std::string bad_flag(const std::string& s);            // axis and args keys
std::string bad_env_name(const std::string& s);        // environment keys
std::string bad_scheduler_word(const std::string& s);  // partition, account, qos
std::string bad_free_text(const std::string& s);       // no control characters
std::string bad_arg_value(const std::string& s);       // free text, and '-' only before a number
std::string bad_any_text(const std::string& s);        // no control character but \n and \t

}  // namespace dls
