#include <doctest/doctest.h>

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

TEST_CASE("split keeps empty fields") {
  const auto parts = recycle::split("a,,b,", ',');
  REQUIRE(parts.size() == 4);
  CHECK(parts[0] == "a");
  CHECK(parts[1].empty());
  CHECK(parts[2] == "b");
  CHECK(parts[3].empty());
}
