#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "core/parse.hpp"

using recycle::InputError;

TEST_CASE("parse_int accepts whole integers and names the place of anything else") {
  CHECK(recycle::parse_int("42", "--pp") == 42);
  CHECK(recycle::parse_int(" -7 ", "--pp") == -7);
  CHECK(recycle::parse_int("+3", "--pp") == 3);
  for (const char* bad : {"", "12abc", "1.5", "abc", "99999999999999999999", "--1"}) {
    CAPTURE(bad);
    try {
      (void)recycle::parse_int(bad, "--pp");
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(e.where() == "--pp");
      CHECK(std::string(e.what()).rfind("--pp: expected an integer", 0) == 0);
    }
  }
}

TEST_CASE("parse_double rejects trailing text, NaN and infinity") {
  CHECK(recycle::parse_double("0.25", "x") == 0.25);
  CHECK(recycle::parse_double("1e3", "x") == 1000.0);
  for (const char* bad : {"", "nan", "inf", "1.0s", "--"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS((void)recycle::parse_double(bad, "f.csv:3"), InputError);
  }
}

TEST_CASE("a bad number is quoted in its error cut to 40 characters, control bytes escaped") {
  // A field of ten million digits and an x: the message quotes the first 40 digits and "...".
  const std::string huge = std::string(10'000'000, '7') + "x";
  const std::string forty(40, '7');
  CHECK_THROWS_WITH_AS((void)recycle::parse_double(huge, "f.csv:2"),
                       ("f.csv:2: expected a number, got '" + forty + "...'").c_str(), InputError);
  CHECK_THROWS_WITH_AS((void)recycle::parse_int(huge, "f.csv:2"),
                       ("f.csv:2: expected an integer, got '" + forty + "...'").c_str(),
                       InputError);
  CHECK_THROWS_WITH_AS((void)recycle::parse_int("1\x01", "--pp"),
                       "--pp: expected an integer, got '1\\x01'", InputError);
}

TEST_CASE("one_line escapes control bytes only, and cuts nothing") {
  // A file name with a newline and a tab, DEL, and UTF-8 (µ is C2 B5): printable text and UTF-8
  // stay, each control byte becomes \xHH.
  CHECK(recycle::one_line("out/a\nb\tc.json") == "out/a\\x0Ab\\x09c.json");
  CHECK(recycle::one_line("x\x7fy") == "x\\x7Fy");
  CHECK(recycle::one_line("1 \xc2\xb5s") == "1 \xc2\xb5s");
  const std::string long_line(100, 'a');
  CHECK(recycle::one_line(long_line) == long_line);
}

TEST_CASE("positive_nanos refuses a time that rounds to 0 ns") {
  // Simulated time is whole nanoseconds, rounded to the nearest: 600 s is 6e11 ns, 1e-9 s is
  // 1 ns, 6e-10 s (0.6 ns) rounds up to 1 ns, and 4e-10 s (0.4 ns) or 1e-12 s round to 0 ns.
  CHECK(recycle::positive_nanos(600, "600", "x") == 600'000'000'000);
  CHECK(recycle::positive_nanos(1e-9, "1e-9", "x") == 1);
  CHECK(recycle::positive_nanos(6e-10, "6e-10", "x") == 1);
  for (const double tiny : {4e-10, 1e-12, 0.0}) {
    CAPTURE(tiny);
    try {
      (void)recycle::positive_nanos(tiny, "1e-12", "st.csv:2");
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(e.where() == "st.csv:2");
      CHECK(std::string(e.what()).rfind("st.csv:2: '1e-12' seconds rounds to 0 ns", 0) == 0);
    }
  }
}

TEST_CASE("split keeps empty fields") {
  const auto parts = recycle::split("a,,b,", ',');
  REQUIRE(parts.size() == 4);
  CHECK(parts[0] == "a");
  CHECK(parts[1].empty());
  CHECK(parts[2] == "b");
  CHECK(parts[3].empty());
}
