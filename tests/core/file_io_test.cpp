#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <iterator>
#include <thread>

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

TEST_CASE("a file refused for its size is refused before it is written, at read_text_file's cap") {
  const fs::path dir =
      fs::temp_directory_path() / ("recycle_file_io_size_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "t.txt").string();
  const std::string content = "0123456789\n";  // 11 bytes
  // At the cap: written, and read back under the same cap.
  recycle::require_readable_size(content, path, 11);
  recycle::write_text_file(path, content);
  CHECK(recycle::read_text_file(path, 11) == content);
  // One byte over: both sides refuse.
  CHECK_THROWS_WITH_AS(recycle::require_readable_size(content, path, 10),
                       (path + ": would take 11 bytes, more than the 10 bytes a text file may "
                               "hold, so it would not read back")
                           .c_str(),
                       recycle::InputError);
  CHECK_THROWS_AS((void)recycle::read_text_file(path, 10), recycle::InputError);
  fs::remove_all(dir);
}

TEST_CASE("write_text_file into a missing directory fails cleanly and leaves nothing") {
  const std::string path = "/nonexistent-dir-recycle/out.json";
  CHECK_THROWS_AS(recycle::write_text_file(path, "x"), recycle::InputError);
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("write_text_file follows a symbolic link and writes through a FIFO") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("recycle_file_io_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SUBCASE("a link to a file: the file is replaced, the link stays a link") {
    const auto target = dir / "target.txt", link = dir / "link.txt";
    recycle::write_text_file(target.string(), "old\n");
    std::filesystem::create_symlink(target, link);
    recycle::write_text_file(link.string(), "new\n");
    CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(link)));
    CHECK(recycle::read_text_file(target.string()) == "new\n");
  }
  SUBCASE("a FIFO stays a FIFO and its reader gets the content") {
    const auto fifo = dir / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string got;
    std::thread reader([&] {
      std::ifstream in(fifo);
      got.assign(std::istreambuf_iterator<char>(in), {});
    });
    recycle::write_text_file(fifo.string(), "through\n");
    reader.join();
    CHECK(got == "through\n");
    CHECK(std::filesystem::is_fifo(fifo));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("an output transaction puts its files in place on commit, and none if it ends without") {
  const fs::path dir =
      fs::temp_directory_path() / ("recycle_transaction_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string a = (dir / "a.txt").string();
  const std::string b = (dir / "b.txt").string();
  {
    recycle::OutputTransaction outputs;
    recycle::write_text_file(a, "first\n");
    recycle::write_text_file(b, "second\n");
    CHECK_FALSE(fs::exists(a));  // staged, not yet in place
    // The command fails here: the transaction ends without commit().
  }
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 0);
  {
    recycle::OutputTransaction outputs;
    recycle::write_text_file(a, "first\n");
    recycle::write_text_file(b, "second\n");
    recycle::write_text_file(a, "again\n");  // written twice: the last content wins
    outputs.commit();
  }
  CHECK(recycle::read_text_file(a) == "again\n");
  CHECK(recycle::read_text_file(b) == "second\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);
  {
    // An earlier output that existed stays as it was when a later run fails.
    recycle::OutputTransaction outputs;
    recycle::write_text_file(a, "replaced\n");
  }
  CHECK(recycle::read_text_file(a) == "again\n");
  fs::remove_all(dir);
}

namespace {

/// In a child process, from the default dispositions a shell gives a command: opens an output
/// transaction, writes `old` over a.txt (which holds "old\n") and b.txt (new), both staged, then
/// raises `sig`. Returns the child's wait status; it exits 10 when a file was not staged, 11 when
/// a write threw and 12 when the signal did not end it.
int staged_then_signalled(const fs::path& dir, int sig) {
  const std::string a = (dir / "a.txt").string();
  const std::string b = (dir / "b.txt").string();
  const pid_t child = ::fork();
  if (child == 0) {
    for (const int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
    try {
      recycle::OutputTransaction outputs;
      recycle::write_text_file(a, "new\n");
      recycle::write_text_file(b, "new\n");
      if (!fs::exists(a + ".tmp-recycle") || !fs::exists(b + ".tmp-recycle")) ::_exit(10);
      ::raise(sig);
    } catch (...) {
      ::_exit(11);
    }
    ::_exit(12);
  }
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return status;
}

bool same_handler(const struct sigaction& a, const struct sigaction& b) {
  return a.sa_handler == b.sa_handler;
}

bool ignored(const struct sigaction& a) {
  return a.sa_handler == SIG_IGN;
}

/// The dispositions of SIGTERM and SIGHUP as they are now.
struct Dispositions {
  struct sigaction term {};
  struct sigaction hup {};
};
Dispositions dispositions() {
  Dispositions d;
  REQUIRE(::sigaction(SIGTERM, nullptr, &d.term) == 0);
  REQUIRE(::sigaction(SIGHUP, nullptr, &d.hup) == 0);
  return d;
}

}  // namespace

TEST_CASE("a signal that ends a command removes its staged files and ends it by that signal") {
  for (const int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    const fs::path dir =
        fs::temp_directory_path() /
        ("recycle_signal_" + std::to_string(::getpid()) + "_" + std::to_string(sig));
    fs::remove_all(dir);
    fs::create_directories(dir);
    recycle::write_text_file((dir / "a.txt").string(), "old\n");
    const int status = staged_then_signalled(dir, sig);
    CHECK_MESSAGE(WIFSIGNALED(status), "exit status " << WEXITSTATUS(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK_FALSE(fs::exists(dir / "a.txt.tmp-recycle"));
    CHECK_FALSE(fs::exists(dir / "b.txt.tmp-recycle"));
    CHECK_FALSE(fs::exists(dir / "b.txt"));
    CHECK(recycle::read_text_file((dir / "a.txt").string()) == "old\n");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
    fs::remove_all(dir);
  }
}

TEST_CASE(
    "an output transaction gives the signals back their dispositions and leaves one ignored") {
  const Dispositions before = dispositions();
  ::signal(SIGHUP, SIG_IGN);  // as under nohup
  {
    recycle::OutputTransaction outputs;
    const Dispositions during = dispositions();
    CHECK_FALSE(same_handler(during.term, before.term));
    CHECK(ignored(during.hup));
  }
  const Dispositions after = dispositions();
  CHECK(same_handler(after.term, before.term));
  CHECK(ignored(after.hup));
  ::sigaction(SIGHUP, &before.hup, nullptr);
}
