#include <doctest/doctest.h>

#include "core/csv.hpp"
#include "core/error.hpp"

TEST_CASE("parse_csv skips blank and comment lines and keeps line numbers") {
  const auto rows = recycle::parse_csv("# header comment\na,b\n\n1,\"x, y\",\"q\"\"q\"\n", "t.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].line == 2);
  CHECK(rows[0].fields == std::vector<std::string>{"a", "b"});
  CHECK(rows[1].line == 4);
  CHECK(rows[1].fields == std::vector<std::string>{"1", "x, y", "q\"q"});
  CHECK(rows[1].where("t.csv") == "t.csv:4");
}

TEST_CASE("parse_csv handles CRLF and rejects an unterminated quote") {
  const auto rows = recycle::parse_csv("a,b\r\nc,d\r\n", "t.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].fields == std::vector<std::string>{"c", "d"});
  try {
    (void)recycle::parse_csv("a\n\"open,b\n", "t.csv");
    FAIL("accepted");
  } catch (const recycle::InputError& e) {
    CHECK(std::string(e.what()) == "t.csv:2: unterminated quoted field");
  }
}

TEST_CASE("csv_escape round-trips through parse_csv") {
  const std::string field = "disk, \"bad\" sector";
  const auto rows = recycle::parse_csv(recycle::csv_escape(field) + ",x\n", "t.csv");
  CHECK(rows.at(0).fields.at(0) == field);
  CHECK(recycle::csv_escape("plain") == "plain");
}
