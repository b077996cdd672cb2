// The JSON Lines policy (jsonl.hpp): torn lines skipped and named, a torn tail moved aside and cut
// off on open, a whole last line only given its newline, whole files replaced atomically.
#include "measure/jsonl.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "measure/check.hpp"
#include "measure/record.hpp"
#include "measure/test_tmp.hpp"

namespace dls {
namespace {

std::string fresh(const std::string& name) {
  const auto dir = test::tmp_dir("jsonl_test");
  const std::string p = (dir / name).string();
  std::filesystem::remove(p);
  std::filesystem::remove(p + ".torn");
  return p;
}

void put(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string get(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(Jsonl, TornAndUnreadableLinesAreSkippedAndNamed) {
  const std::string p = fresh("r.jsonl");
  put(p, "{\"a\":1}\n{\"a\":\n[1,2]\n\n{\"a\":2}\n{\"a\"");
  const JsonlContents c = read_jsonl(p);
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].line, 1);
  EXPECT_EQ(c.lines[1].line, 5);
  EXPECT_EQ(c.lines[1].value["a"], 2);
  ASSERT_EQ(c.torn.size(), 3u);
  EXPECT_EQ(c.torn[0], p + ":2: torn or unreadable line (5 bytes) skipped");
  EXPECT_EQ(c.torn[1], p + ":3: torn or unreadable line (5 bytes) skipped");
  EXPECT_EQ(c.torn[2], p + ":6: torn or unreadable line (4 bytes) skipped");
  EXPECT_TRUE(read_jsonl(fresh("none.jsonl")).lines.empty());  // a missing file is empty
}

TEST(Jsonl, TheOnlyWriterMovesATornTailAsideAndCutsIt) {
  const std::string p = fresh("t.jsonl");
  put(p, "{\"a\":1}\n{\"a\":2}\n{\"sch");
  {
    RecordWriter w(p, true);
    EXPECT_EQ(w.repaired(),
              p + ": a torn last line (5 bytes, a write cut short) was moved to " + p + ".torn");
    w.append_json({{"a", 3}});
  }
  EXPECT_EQ(get(p), "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n");
  EXPECT_EQ(get(p + ".torn"), "{\"sch\n");
  EXPECT_EQ(RecordWriter(p, true).repaired(), "");  // whole now: nothing to do
}

TEST(Jsonl, AnyOtherWriterEndsATornTailWithANewlineAndCutsNothing) {
  const std::string p = fresh("s.jsonl");
  put(p, "{\"a\":1}\n{\"sch");
  {
    RecordWriter w(p);
    EXPECT_EQ(w.repaired(), p + ": a torn last line (5 bytes, a write cut short) was ended with a "
                                "newline; readers skip it");
    w.append_json({{"a", 3}});
  }
  EXPECT_EQ(get(p), "{\"a\":1}\n{\"sch\n{\"a\":3}\n");
  EXPECT_FALSE(std::filesystem::exists(p + ".torn"));
}

TEST(Jsonl, AnAppendAfterAWriterKilledMidLineStartsOnANewLine) {
  const std::string p = fresh("k.jsonl");
  RecordWriter w(p);  // open before the other writer dies
  w.append_json({{"a", 1}});
  {
    std::ofstream other(p, std::ios::app | std::ios::binary);
    other << "{\"b\":";  // another writer, killed in the middle of its line
  }
  w.append_json({{"a", 2}});
  EXPECT_EQ(get(p), "{\"a\":1}\n{\"b\":\n{\"a\":2}\n");
  const JsonlContents c = read_jsonl(p);
  ASSERT_EQ(c.lines.size(), 2u);  // the record after the fragment is whole
  EXPECT_EQ(c.lines[1].value["a"], 2);
}

TEST(Jsonl, AWholeLastLineOnlyGetsItsNewline) {
  const std::string p = fresh("n.jsonl");
  put(p, "{\"a\":1}\n{\"a\":2}");
  EXPECT_EQ(RecordWriter(p, true).repaired(), p + ": its last line lacked a newline; added one");
  EXPECT_EQ(get(p), "{\"a\":1}\n{\"a\":2}\n");
  EXPECT_FALSE(std::filesystem::exists(p + ".torn"));
}

TEST(Jsonl, ATornFileWithoutAnyNewlineIsCutToNothing) {
  const std::string p = fresh("o.jsonl");
  put(p, std::string(100000, 'x'));  // longer than one read-back chunk
  EXPECT_NE(RecordWriter(p, true).repaired().find("(100000 bytes"), std::string::npos);
  EXPECT_EQ(get(p), "");
  EXPECT_EQ(get(p + ".torn").size(), 100001u);
}

TEST(Jsonl, WholeFilesAreReplacedAtomically) {
  const std::string p = fresh("m.json");
  write_file_atomic(p, "one\n");
  write_file_atomic(p, "two\n");
  EXPECT_EQ(get(p), "two\n");
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(p).parent_path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos)
        << "a temporary file was left: " << e.path();
  // a folder that does not exist: an Error naming the file, and nothing written
  const std::string bad = fresh("m.json") + ".d/none/x.json";
  try {
    write_file_atomic(bad, "x");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dls
