// read_text_file on streams, and an OutputTransaction whose device write fails or whose output
// would replace an input.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "core/file_io.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("read_text_file stops at the first NUL byte of an endless stream, naming its line") {
  CHECK_THROWS_WITH_AS((void)recycle::read_text_file("/dev/zero"),
                       "/dev/zero:1: binary content (NUL byte), expected a text file",
                       recycle::InputError);
}

TEST_CASE("read_text_file names the line of a NUL byte past the first chunk") {
  const fs::path dir = fresh_dir("recycle_text_file_nul");
  const fs::path file = dir / "late_nul.txt";
  {
    // 100000 lines of "x\n" (200000 bytes, past a 64 KiB chunk), then a NUL on line 100001.
    std::ofstream out(file, std::ios::binary);
    for (int i = 0; i < 100000; ++i) out << "x\n";
    out.write("ab\0", 3);
  }
  CHECK_THROWS_WITH_AS(
      (void)recycle::read_text_file(file.string()),
      (file.string() + ":100001: binary content (NUL byte), expected a text file").c_str(),
      recycle::InputError);
  fs::remove_all(dir);
}

TEST_CASE("read_text_file refuses content over its cap, naming the cap") {
  const fs::path dir = fresh_dir("recycle_text_file_cap");
  const fs::path file = dir / "ten.txt";
  {
    std::ofstream out(file, std::ios::binary);
    out << "0123456789";
  }
  CHECK(recycle::read_text_file(file.string(), 10) == "0123456789");
  CHECK_THROWS_WITH_AS(
      (void)recycle::read_text_file(file.string(), 9),
      (file.string() + ": larger than 9 bytes, the most a text file may hold (is it the right "
                       "file?)")
          .c_str(),
      recycle::InputError);
  CHECK(recycle::kMaxTextFileBytes == 1073741824);  // 1 GiB = 2^30 bytes
  fs::remove_all(dir);
}

TEST_CASE("read_text_file reads a FIFO to its end") {
  const fs::path dir = fresh_dir("recycle_text_file_fifo");
  const fs::path fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    for (int i = 0; i < 50000; ++i) out << "line\n";
  });
  const std::string got = recycle::read_text_file(fifo.string());
  writer.join();
  CHECK(got.size() == 250000);  // 50000 x "line\n"
  CHECK(got.substr(0, 10) == "line\nline\n");
  fs::remove_all(dir);
}

TEST_CASE("a transaction whose device write fails puts none of its files in place") {
  const fs::path dir = fresh_dir("recycle_text_file_full");
  const std::string a = (dir / "a.svg").string();
  const std::string b = (dir / "b.json").string();
  {
    recycle::OutputTransaction outputs;
    recycle::write_text_file(a, "first\n");
    recycle::write_text_file(b, "second\n");
    recycle::write_text_file("/dev/full", "report\n");
    CHECK_THROWS_WITH_AS(outputs.commit(), "/dev/full: write failed", recycle::InputError);
  }
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 0);
  fs::remove_all(dir);
}

TEST_CASE("an output transaction refuses to write over a file the command has read") {
  const fs::path dir = fresh_dir("recycle_text_file_own");
  const std::string in = (dir / "job.json").string();
  recycle::write_text_file(in, "{}\n");
  {
    recycle::OutputTransaction outputs;
    (void)recycle::read_text_file(in);
    // Through a different spelling of the same path, without check_writable first.
    const std::string same = (dir / "." / "job.json").string();
    CHECK_THROWS_WITH_AS(recycle::write_text_file(same, "overwritten\n"),
                         (same + ": is an input of this command too; write it elsewhere").c_str(),
                         recycle::InputError);
    outputs.commit();
  }
  CHECK(recycle::read_text_file(in) == "{}\n");
  fs::remove_all(dir);
}
