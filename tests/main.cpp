// The doctest entry point shared by every unit-test binary. CTest runs each test case by name
// (--test-case=NAME); a name that matches nothing (a name the discovery cut short) would run no
// test and pass, so a run that selects test cases by name and runs none fails.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace {

int g_selected = -1;  // test cases that passed the filters, set when a run ends

struct SelectedCount : doctest::IReporter {
  explicit SelectedCount(const doctest::ContextOptions& /*options*/) {}
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    g_selected = static_cast<int>(stats.numTestCasesPassingFilters);
  }
  void test_case_start(const doctest::TestCaseData& /*data*/) override {}
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*exception*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};

REGISTER_LISTENER("selected-count", 1, SelectedCount);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;
  bool by_name = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    by_name = by_name || arg.starts_with("--test-case=") || arg.starts_with("-tc=");
  }
  if (by_name && g_selected == 0) {
    std::fprintf(stderr, "error: no test case matches the --test-case filter\n");
    return 1;
  }
  return result;
}
