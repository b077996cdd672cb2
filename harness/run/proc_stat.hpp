// /proc/PID/stat, read the one careful way: the command name (field 2) is in parentheses and may
// hold spaces and ')', so fields are counted from its last ')'. Used by the campaign lock (a
// pid's start time) and the point sessions (a process's state and session).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dls {

// Fields 3 (state) onwards of /proc/<pid>/stat, in order: result[0] is field 3. Empty when
// there is no such process (or its stat cannot be read).
inline std::vector<std::string> proc_stat_fields(const std::string& pid) {
  std::ifstream f("/proc/" + pid + "/stat");
  std::string s;
  std::getline(f, s);  // one line
  const auto close = s.rfind(')');
  std::vector<std::string> out;
  if (close == std::string::npos || close + 2 >= s.size()) return out;
  std::istringstream rest(s.substr(close + 2));
  for (std::string field; rest >> field;) out.push_back(field);
  return out;
}

}  // namespace dls
