// The file policy every dlscale writer and reader follows (docs/harness_formats.md, "Files"):
//   JSON Lines (.jsonl) are append-only: one whole line a write(2), synced (RecordWriter). A kill
//     during a write can still leave a torn last line. Any writer ends it with a newline before
//     its own line, so a record is never glued to a fragment. The one writer of a campaign's
//     records.jsonl and points.jsonl (the runner, under the campaign lock) goes further when it
//     opens them: it moves the fragment's bytes to FILE.torn and cuts the file back to its last
//     whole line (repair_torn_tail with move_aside), the one change to a .jsonl file that is not
//     an append; with several writers, possibly on other nodes, nothing is ever cut.
//   Readers skip any line that is not a JSON object and name it (file:line, bytes), so every
//     reader (C++ and Python) sees the same records and says the same thing about the rest.
//   Whole files (manifest.json, summary.json, acceptance.json, report.md) are replaced
//     atomically: written to a temporary file beside them, fsynced, renamed over, and the folder
//     fsynced; a failed write is an Error and leaves the old file as it was.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dls {

struct JsonlLine {
  long line = 0;  // 1-based line number in the file
  nlohmann::json value;
};

struct JsonlContents {
  std::vector<JsonlLine> lines;   // the JSON objects, in file order
  std::vector<std::string> torn;  // "FILE:LINE: torn or unreadable line (N bytes) skipped"
};

// The objects of a JSON Lines file (none when it does not exist); Error when it cannot be read.
JsonlContents read_jsonl(const std::string& path);

// Repairs a torn last line of the open file `fd` (the caller holds its lock): a last line that is
// a whole JSON object only lacks its newline and gets one; any other bytes after the last
// newline are, with move_aside (the caller is the file's only writer), appended to PATH.torn
// and cut off, else ended with a newline (a line readers skip). Returns what was done, "" when
// nothing was.
std::string repair_torn_tail(int fd, const std::string& path, bool move_aside);

// Whether the open file `fd` is empty or ends with a newline.
bool ends_whole(int fd, const std::string& path);

// Replaces `path` with `content` atomically (temporary file, fsync, rename, fsync of the folder).
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace dls
