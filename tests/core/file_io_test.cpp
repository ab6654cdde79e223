#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/file_io.hpp"

namespace fs = std::filesystem;

TEST_CASE("write_text_file writes atomically and read_text_file reads it back") {
  const fs::path dir = fs::temp_directory_path() / "recycle_file_io_test";
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  recycle::write_text_file(path, "hello\n");
  CHECK(recycle::read_text_file(path) == "hello\n");
  CHECK_FALSE(fs::exists(path + ".tmp-recycle"));
  fs::remove_all(dir);
}

TEST_CASE("read_text_file rejects missing files, directories and binary content") {
  const fs::path dir = fs::temp_directory_path() / "recycle_file_io_test2";
  fs::create_directories(dir);
  CHECK_THROWS_WITH_AS((void)recycle::read_text_file((dir / "none").string()),
                       ((dir / "none").string() + ": no such file").c_str(), recycle::InputError);
  CHECK_THROWS_AS((void)recycle::read_text_file(dir.string()), recycle::InputError);
  const fs::path bin = dir / "bin";
  {
    std::ofstream out(bin, std::ios::binary);
    out.write("ab\0cd", 5);
  }
  CHECK_THROWS_AS((void)recycle::read_text_file(bin.string()), recycle::InputError);
  fs::remove_all(dir);
}

TEST_CASE("write_text_file into a missing directory fails cleanly and leaves nothing") {
  const std::string path = "/nonexistent-dir-recycle/out.json";
  CHECK_THROWS_AS(recycle::write_text_file(path, "x"), recycle::InputError);
  CHECK_FALSE(fs::exists(path));
}
